// Squeeze: axes are an attribute before opset 13 and an optional int64 input from 13 on;
// without axes every dim of extent 1 goes.
#include <memory>
#include <vector>

#include "exec/kernels/common/copy.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class SqueezeKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool axes_are_input) {
    auto kernel = std::unique_ptr<SqueezeKernel>(new SqueezeKernel());
    kernel->axes_are_input_ = axes_are_input;
    if (!axes_are_input) {
      EPCTX_ASSIGN_OR_RETURN(kernel->axes_, node.attrs->GetInts("axes"));
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "data"));
    std::vector<int64_t> axes = axes_;
    if (axes_are_input_) {
      if (const Tensor* t = ctx.input(1)) {
        EPCTX_ASSIGN_OR_RETURN(axes, ReadIndexVector(*t, "axes"));
      }
    }
    const std::vector<int64_t>& xs = x->shape();
    const int64_t rank = static_cast<int64_t>(xs.size());
    std::vector<bool> drop(xs.size(), false);
    if (axes.empty()) {
      for (size_t i = 0; i < xs.size(); ++i) drop[i] = xs[i] == 1;
    }
    for (int64_t a : axes) {
      EPCTX_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a, rank, "axis"));
      if (xs[static_cast<size_t>(axis)] != 1) {
        return EPCTX_ERROR(kInvalidArgument, "cannot squeeze axis {} of shape {}: it is not 1", a,
                           ShapeToString(xs));
      }
      drop[static_cast<size_t>(axis)] = true;
    }
    std::vector<int64_t> shape;
    for (size_t i = 0; i < xs.size(); ++i) {
      if (!drop[i]) shape.push_back(xs[i]);
    }
    return ViewOrCopy(ctx, 0, 0, *x, std::move(shape));
  }

 private:
  SqueezeKernel() = default;
  bool axes_are_input_ = false;
  std::vector<int64_t> axes_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateSqueeze(const NodeInfo& node) {
  return SqueezeKernel::Create(node, node.opset >= 13);
}

}  // namespace epctx::exec::kernels
