// ConstantOfShape: a tensor of the given shape filled with the one-element `value` attribute,
// whose type becomes the output's (float32 zero when absent).
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/indexing/strided_copy.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class ConstantOfShapeKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<ConstantOfShapeKernel>(new ConstantOfShapeKernel());
    const AttributeValue* value = node.attrs->Find("value");
    if (value != nullptr) {
      if (value->type != AttrType::kTensor) {
        return EPCTX_ERROR(kInvalidArgument, "attribute value is not a tensor");
      }
      const Tensor& t = value->tensor;
      EPCTX_ASSIGN_OR_RETURN(size_t element, CopyableElementSize(t.dtype(), "value"));
      if (element > kernel->value_.size()) {
        return EPCTX_ERROR(kUnsupported, "attribute value has type {}", DataTypeName(t.dtype()));
      }
      if (t.element_count() != 1) {
        return EPCTX_ERROR(kInvalidArgument, "attribute value has {} elements, expected 1",
                           t.element_count());
      }
      kernel->dtype_ = t.dtype();
      kernel->element_ = element;
      std::memcpy(kernel->value_.data(), t.data(), element);
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* s, RequiredInput(ctx, 0, "input"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadIndexVector(*s, "input"));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, dtype_, shape));
    FillElements(static_cast<std::byte*>(y->mutable_data()), y->element_count(), value_.data(),
                 element_);
    return Status::Ok();
  }

 private:
  ConstantOfShapeKernel() = default;
  DataType dtype_ = DataType::kFloat32;
  size_t element_ = sizeof(float);
  std::array<std::byte, 8> value_{};
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateConstantOfShape(const NodeInfo& node) {
  return ConstantOfShapeKernel::Create(node);
}

}  // namespace epctx::exec::kernels
