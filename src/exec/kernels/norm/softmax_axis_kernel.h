// One kernel for the ops computed along the Softmax axis (LogSoftmax, Hardmax): attribute
// decoding, type checks, the opset-13 axis change and the float32/float64 dispatch are the same;
// only `Op::Compute` differs.
#pragma once

#include <memory>

#include "exec/kernel.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/norm/softmax_axis.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {

// `Op` provides: template <typename T> static void Compute(const AxisSplit&, const T* x, T* y,
// int threads);
template <typename Op>
class SoftmaxAxisKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool single_axis) {
    auto kernel = std::unique_ptr<SoftmaxAxisKernel>(new SoftmaxAxisKernel());
    kernel->single_axis_ = single_axis;
    EPCTX_ASSIGN_OR_RETURN(kernel->axis_,
                           node.attrs->GetInt("axis", DefaultSoftmaxAxis(single_axis)));
    if (InputPresent(node, 0)) {
      EPCTX_RETURN_IF_ERROR(ExpectFloat32Or64(node.inputs[0].dtype, "input"));
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    EPCTX_RETURN_IF_ERROR(ExpectFloat32Or64(x->dtype(), "input"));
    EPCTX_ASSIGN_OR_RETURN(AxisSplit s, SplitAtSoftmaxAxis(x->shape(), axis_, single_axis_));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), x->shape()));
    if (y->element_count() == 0) return Status::Ok();
    if (x->dtype() == DataType::kFloat32) {
      Op::Compute(s, x->data_as<float>(), y->mutable_data_as<float>(), ctx.num_threads());
    } else {
      Op::Compute(s, x->data_as<double>(), y->mutable_data_as<double>(), ctx.num_threads());
    }
    return Status::Ok();
  }

 private:
  SoftmaxAxisKernel() = default;

  bool single_axis_ = true;
  int64_t axis_ = -1;
};

// Opsets 1-12 flatten to 2-D at `axis`; 13 and later work along the one dim `axis`.
template <typename Op>
Result<std::unique_ptr<Kernel>> CreateSoftmaxAxisKernel(const NodeInfo& node) {
  return SoftmaxAxisKernel<Op>::Create(node, node.opset >= 13);
}

}  // namespace epctx::exec::kernels
