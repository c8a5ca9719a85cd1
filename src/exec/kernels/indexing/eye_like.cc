// EyeLike: a 2-D tensor of the input's shape with ones on the k-th diagonal, in the `dtype`
// attribute's type (the input's when absent).
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// The bytes of 1 in `type`, or kUnsupported.
Result<std::array<std::byte, 8>> OneOf(DataType type) {
  std::array<std::byte, 8> one{};
  auto put = [&one](auto v) { std::memcpy(one.data(), &v, sizeof(v)); };
  switch (type) {
    case DataType::kFloat32:
      put(1.0f);
      break;
    case DataType::kFloat64:
      put(1.0);
      break;
    case DataType::kFloat16:
      put(uint16_t{0x3C00});
      break;
    case DataType::kBFloat16:
      put(uint16_t{0x3F80});
      break;
    case DataType::kBool:
    case DataType::kUint8:
    case DataType::kInt8:
      put(uint8_t{1});
      break;
    case DataType::kUint16:
    case DataType::kInt16:
      put(uint16_t{1});
      break;
    case DataType::kUint32:
    case DataType::kInt32:
      put(uint32_t{1});
      break;
    case DataType::kUint64:
    case DataType::kInt64:
      put(uint64_t{1});
      break;
    default:
      return EPCTX_ERROR(kUnsupported, "EyeLike does not support type {}", DataTypeName(type));
  }
  return one;
}

class EyeLikeKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<EyeLikeKernel>(new EyeLikeKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->k_, node.attrs->GetInt("k", 0));
    EPCTX_ASSIGN_OR_RETURN(int64_t dtype, node.attrs->GetInt("dtype", 0));
    kernel->dtype_ = static_cast<DataType>(dtype);
    if (dtype != 0) EPCTX_RETURN_IF_ERROR(OneOf(kernel->dtype_).status());
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    EPCTX_RETURN_IF_ERROR(ExpectRank(*x, 2, "input"));
    const DataType type = dtype_ == DataType::kUndefined ? x->dtype() : dtype_;
    EPCTX_ASSIGN_OR_RETURN(auto one, OneOf(type));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, type, x->shape()));
    if (y->element_count() == 0) return Status::Ok();
    const size_t e = DataTypeSize(type);
    auto* out = static_cast<std::byte*>(y->mutable_data());
    std::memset(out, 0, y->byte_size());
    const int64_t rows = x->shape()[0];
    const int64_t cols = x->shape()[1];
    for (int64_t i = 0; i < rows; ++i) {
      // j = i + k, compared without forming i + k (k may be huge).
      if (k_ < -i || k_ >= cols - i) continue;
      std::memcpy(out + static_cast<size_t>(i * cols + i + k_) * e, one.data(), e);
    }
    return Status::Ok();
  }

 private:
  EyeLikeKernel() = default;
  int64_t k_ = 0;
  DataType dtype_ = DataType::kUndefined;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateEyeLike(const NodeInfo& node) {
  return EyeLikeKernel::Create(node);
}

}  // namespace epctx::exec::kernels
