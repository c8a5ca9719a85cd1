// If: runs then_branch or else_branch on the captured values and returns its outputs.
#include <memory>

#include "exec/kernels/common/copy.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/control/body.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class IfKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    if (node.inputs.size() != 1 + node.implicit_inputs) {
      return EPCTX_ERROR(kInvalidArgument, "If takes 1 input (cond), got {}",
                         node.inputs.size() - node.implicit_inputs);
    }
    EPCTX_ASSIGN_OR_RETURN(Body then_branch, Body::Bind(node, "then_branch", 0));
    EPCTX_ASSIGN_OR_RETURN(Body else_branch, Body::Bind(node, "else_branch", 0));
    for (const Body* b : {&then_branch, &else_branch}) {
      if (b->output_count() != node.outputs.size()) {
        return EPCTX_ERROR(kInvalidArgument, "If has {} outputs but a branch returns {}",
                           node.outputs.size(), b->output_count());
      }
    }
    auto kernel =
        std::unique_ptr<IfKernel>(new IfKernel(std::move(then_branch), std::move(else_branch)));
    for (size_t i = 0; i < node.outputs.size(); ++i)
      kernel->present_.push_back(OutputPresent(node, i));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* cond, RequiredInput(ctx, 0, "cond"));
    if (cond->dtype() != DataType::kBool || cond->element_count() != 1) {
      return EPCTX_ERROR(kInvalidArgument, "cond must be one bool, got {} {}",
                         DataTypeName(cond->dtype()), ShapeToString(cond->shape()));
    }
    const Body& branch = *cond->data_as<bool>() ? then_ : else_;
    EPCTX_ASSIGN_OR_RETURN(std::vector<Tensor> captures, CaptureInputs(ctx, 1));
    EPCTX_ASSIGN_OR_RETURN(AlignedBuffer arena, branch.NewArena());
    EPCTX_ASSIGN_OR_RETURN(std::vector<Tensor> outputs,
                           branch.Run(captures, arena, ctx.run_control()));
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!present_[i]) continue;
      EPCTX_RETURN_IF_ERROR(CopyToOutput(ctx, i, outputs[i], outputs[i].shape()));
    }
    return Status::Ok();
  }

 private:
  IfKernel(Body then_branch, Body else_branch)
      : then_(std::move(then_branch)), else_(std::move(else_branch)) {}

  Body then_;
  Body else_;
  std::vector<bool> present_;  // per output: false when the model omits it
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateIf(const NodeInfo& node) {
  return IfKernel::Create(node);
}

}  // namespace epctx::exec::kernels
