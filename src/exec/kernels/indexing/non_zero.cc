// NonZero: the coordinates of the non-zero elements, as int64 [rank, count] in row-major order.
// Floats compare by value so that -0.0 counts as zero.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

template <typename T>
void MarkNonZero(const void* data, int64_t n, std::vector<uint8_t>& mark) {
  const T* p = static_cast<const T*>(data);
  for (int64_t i = 0; i < n; ++i) mark[static_cast<size_t>(i)] = p[i] != T(0);
}

// Half-precision values are zero when every bit but the sign is.
void MarkNonZeroHalf(const void* data, int64_t n, std::vector<uint8_t>& mark) {
  const uint16_t* p = static_cast<const uint16_t*>(data);
  for (int64_t i = 0; i < n; ++i) mark[static_cast<size_t>(i)] = (p[i] & 0x7fff) != 0;
}

class NonZeroKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo&) {
    return std::unique_ptr<Kernel>(new NonZeroKernel());
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    const int64_t n = x->element_count();
    std::vector<uint8_t> mark(static_cast<size_t>(n));
    switch (x->dtype()) {
      case DataType::kFloat32:
        MarkNonZero<float>(x->data(), n, mark);
        break;
      case DataType::kFloat64:
        MarkNonZero<double>(x->data(), n, mark);
        break;
      case DataType::kFloat16:
      case DataType::kBFloat16:
        MarkNonZeroHalf(x->data(), n, mark);
        break;
      case DataType::kBool:
      case DataType::kUint8:
      case DataType::kInt8:
        MarkNonZero<uint8_t>(x->data(), n, mark);
        break;
      case DataType::kUint16:
      case DataType::kInt16:
        MarkNonZero<uint16_t>(x->data(), n, mark);
        break;
      case DataType::kUint32:
      case DataType::kInt32:
        MarkNonZero<uint32_t>(x->data(), n, mark);
        break;
      case DataType::kUint64:
      case DataType::kInt64:
        MarkNonZero<uint64_t>(x->data(), n, mark);
        break;
      default:
        return EPCTX_ERROR(kUnsupported, "NonZero does not support type {}",
                           DataTypeName(x->dtype()));
    }
    int64_t count = 0;
    for (uint8_t m : mark) count += m;
    const std::vector<int64_t>& shape = x->shape();
    const size_t rank = shape.size();
    EPCTX_ASSIGN_OR_RETURN(
        Tensor * y, ctx.AllocateOutput(0, DataType::kInt64, {static_cast<int64_t>(rank), count}));
    int64_t* out = y->mutable_data_as<int64_t>();
    std::vector<int64_t> pos(rank, 0);
    int64_t k = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (mark[static_cast<size_t>(i)]) {
        for (size_t d = 0; d < rank; ++d) out[static_cast<int64_t>(d) * count + k] = pos[d];
        ++k;
      }
      for (size_t d = rank; d-- > 0;) {
        if (++pos[d] < shape[d]) break;
        pos[d] = 0;
      }
    }
    return Status::Ok();
  }

 private:
  NonZeroKernel() = default;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateNonZero(const NodeInfo& node) {
  return NonZeroKernel::Create(node);
}

}  // namespace epctx::exec::kernels
