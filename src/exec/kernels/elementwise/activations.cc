// Relu and Sigmoid on float32.
#include <memory>

#include "exec/kernels/common/activation.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/elementwise/unary_float.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::elementwise {
namespace {

class ActivationKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, Activation::Kind kind) {
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "X"));
    Activation act;
    act.kind = kind;
    return std::unique_ptr<Kernel>(new ActivationKernel(act));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, x->shape()));
    ParallelMap(
        x->data_as<float>(), y->mutable_data_as<float>(), x->element_count(), ctx.num_threads(),
        [this](const float* in, float* out, int64_t n) { ApplyActivation(act_, in, out, n); });
    return Status::Ok();
  }

 private:
  explicit ActivationKernel(Activation act) : act_(act) {}
  Activation act_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateRelu(const NodeInfo& node) {
  return ActivationKernel::Create(node, Activation::Kind::kRelu);
}

Result<std::unique_ptr<Kernel>> CreateSigmoid(const NodeInfo& node) {
  return ActivationKernel::Create(node, Activation::Kind::kSigmoid);
}

}  // namespace epctx::exec::kernels::elementwise
