// Unsqueeze: axes (positions in the output, negative from its end) are a required attribute
// before opset 13 and a required int64 input from 13 on.
#include <memory>
#include <vector>

#include "exec/kernels/common/copy.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class UnsqueezeKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool axes_are_input) {
    auto kernel = std::unique_ptr<UnsqueezeKernel>(new UnsqueezeKernel());
    kernel->axes_are_input_ = axes_are_input;
    if (!axes_are_input) {
      EPCTX_ASSIGN_OR_RETURN(const AttributeValue* axes,
                             node.attrs->Require("axes", AttrType::kInts));
      kernel->axes_.assign(axes->ints.begin(), axes->ints.end());
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "data"));
    std::vector<int64_t> axes = axes_;
    if (axes_are_input_) {
      EPCTX_ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, 1, "axes"));
      EPCTX_ASSIGN_OR_RETURN(axes, ReadIndexVector(*t, "axes"));
    }
    const std::vector<int64_t>& xs = x->shape();
    const int64_t rank = static_cast<int64_t>(xs.size() + axes.size());
    std::vector<bool> inserted(static_cast<size_t>(rank), false);
    for (int64_t a : axes) {
      EPCTX_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a, rank, "axis"));
      if (inserted[static_cast<size_t>(axis)]) {
        return EPCTX_ERROR(kInvalidArgument, "axis {} is given twice", a);
      }
      inserted[static_cast<size_t>(axis)] = true;
    }
    std::vector<int64_t> shape;
    size_t next = 0;
    for (int64_t i = 0; i < rank; ++i) {
      shape.push_back(inserted[static_cast<size_t>(i)] ? 1 : xs[next++]);
    }
    return ViewOrCopy(ctx, 0, 0, *x, std::move(shape));
  }

 private:
  UnsqueezeKernel() = default;
  bool axes_are_input_ = false;
  std::vector<int64_t> axes_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateUnsqueeze(const NodeInfo& node) {
  return UnsqueezeKernel::Create(node, node.opset >= 13);
}

}  // namespace epctx::exec::kernels
