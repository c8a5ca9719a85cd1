// Flatten: [d0, ..., dn] -> [d0 * ... * d(axis-1), d(axis) * ... * dn], axis in [-rank, rank].
#include <memory>

#include "exec/kernels/common/copy.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class FlattenKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<FlattenKernel>(new FlattenKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->axis_, node.attrs->GetInt("axis", 1));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    const int64_t rank = static_cast<int64_t>(x->shape().size());
    if (axis_ < -rank || axis_ > rank) {
      return EPCTX_ERROR(kInvalidArgument, "axis {} is out of range for rank {}", axis_, rank);
    }
    const size_t axis = static_cast<size_t>(axis_ < 0 ? axis_ + rank : axis_);
    EPCTX_ASSIGN_OR_RETURN(int64_t outer, CheckedDimProduct(x->shape(), 0, axis));
    EPCTX_ASSIGN_OR_RETURN(int64_t inner, CheckedDimProduct(x->shape(), axis, x->shape().size()));
    return ViewOrCopy(ctx, 0, 0, *x, {outer, inner});
  }

 private:
  FlattenKernel() = default;
  int64_t axis_ = 1;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateFlatten(const NodeInfo& node) {
  return FlattenKernel::Create(node);
}

}  // namespace epctx::exec::kernels
