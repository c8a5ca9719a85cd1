// Conv and com.epctx FusedConv (Conv + Relu/Clip/Sigmoid) on float32. W is used in place: its
// OIHW layout already is the row-major [M, C/group * taps] GEMM operand of each group.
#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include "exec/kernels/common/activation.h"
#include "exec/kernels/common/scratch.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/nn/conv_f32.h"
#include "exec/kernels/nn/window.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class ConvKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool fused) {
    auto kernel = std::unique_ptr<ConvKernel>(new ConvKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->window_, ParseWindowAttrs(*node.attrs));
    EPCTX_ASSIGN_OR_RETURN(kernel->group_, node.attrs->GetInt("group", 1));
    if (kernel->group_ < 1) {
      return EPCTX_ERROR(kInvalidArgument, "group is {}, expected at least 1", kernel->group_);
    }
    if (fused) {
      EPCTX_ASSIGN_OR_RETURN(kernel->act_, ParseFusedActivation(*node.attrs));
    }
    EPCTX_RETURN_IF_ERROR(kernel->CheckStatic(node));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1, "W"));
    const Tensor* b = ctx.input(2);
    EPCTX_ASSIGN_OR_RETURN(ConvShape p, Describe(*x, *w, b));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, p.output_shape()));
    if (y->element_count() == 0) return Status::Ok();
    const ConvPlan plan = PlanConvF32(p, ctx.num_threads());
    float* scratch = nullptr;
    if (plan.scratch_floats > 0) {
      EPCTX_ASSIGN_OR_RETURN(scratch, ThreadScratchF32(plan.scratch_floats));
    }
    ConvF32(p, plan, x->data_as<float>(), w->data_as<float>(),
            b != nullptr ? b->data_as<float>() : nullptr, act_, y->mutable_data_as<float>(),
            scratch);
    return Status::Ok();
  }

 private:
  ConvKernel() = default;

  // What the compiler already knows is checked once here rather than failing every run.
  Status CheckStatic(const NodeInfo& node) const {
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "W"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 2, DataType::kFloat32, "B"));
    if (!window_.kernel_shape.empty()) {
      EPCTX_RETURN_IF_ERROR(ValidateWindowAttrs(window_, window_.kernel_shape.size()));
    }
    if (!InputPresent(node, 1) || !node.inputs[1].shape_known) return Status::Ok();
    const std::vector<int64_t>& ws = node.inputs[1].shape;
    if (ws.size() < 3 || ws.size() > 5) {
      return EPCTX_ERROR(kInvalidArgument, "input W has rank {}, expected 3 to 5", ws.size());
    }
    EPCTX_RETURN_IF_ERROR(ValidateWindowAttrs(window_, ws.size() - 2));
    if (ws[0] >= 0 && ws[0] % group_ != 0) {
      return EPCTX_ERROR(kInvalidArgument, "W has {} output channels, not a multiple of group {}",
                         ws[0], group_);
    }
    if (InputPresent(node, 0) && node.inputs[0].shape_known) {
      const std::vector<int64_t>& xs = node.inputs[0].shape;
      if (xs.size() != ws.size()) {
        return EPCTX_ERROR(kInvalidArgument, "input X has rank {}, expected {} (the rank of W)",
                           xs.size(), ws.size());
      }
      int64_t expected_channels = 0;
      if (xs[1] >= 0 && ws[1] >= 0 &&
          (__builtin_mul_overflow(ws[1], group_, &expected_channels) ||
           xs[1] != expected_channels)) {
        return EPCTX_ERROR(kInvalidArgument,
                           "input X has {} channels, expected W[1] = {} times group {}", xs[1],
                           ws[1], group_);
      }
    }
    return Status::Ok();
  }

  Result<ConvShape> Describe(const Tensor& x, const Tensor& w, const Tensor* b) const {
    EPCTX_RETURN_IF_ERROR(ExpectDtype(x, DataType::kFloat32, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(w, DataType::kFloat32, "W"));
    EPCTX_ASSIGN_OR_RETURN(ConvShape p, ResolveConvShape(window_, group_, x.shape(), w.shape()));
    if (b != nullptr) {
      EPCTX_RETURN_IF_ERROR(ExpectDtype(*b, DataType::kFloat32, "B"));
      if (b->shape().size() != 1 || b->shape()[0] != p.out_channels) {
        return EPCTX_ERROR(kInvalidArgument, "input B has shape {}, expected [{}]",
                           ShapeToString(b->shape()), p.out_channels);
      }
    }
    return p;
  }

  WindowAttrs window_;
  int64_t group_ = 1;
  Activation act_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateConv(const NodeInfo& node) {
  return ConvKernel::Create(node, false);
}

Result<std::unique_ptr<Kernel>> CreateFusedConv(const NodeInfo& node) {
  return ConvKernel::Create(node, true);
}

}  // namespace epctx::exec::kernels
