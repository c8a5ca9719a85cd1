// InstanceNormalization: every [N, C] plane of x [N, C, spatial...] is normalized to zero mean and
// unit variance, then scaled and shifted by its channel's scale and B. float32.
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/norm/norm_stats.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class InstanceNormKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<InstanceNormKernel>(new InstanceNormKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->epsilon_, node.attrs->GetFloat("epsilon", 1e-5f));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "input"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "scale"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 2, DataType::kFloat32, "B"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* scale, RequiredInput(ctx, 1, "scale"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* bias, RequiredInput(ctx, 2, "B"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "input"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*scale, DataType::kFloat32, "scale"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*bias, DataType::kFloat32, "B"));
    const std::vector<int64_t>& xs = x->shape();
    if (xs.size() < 2) {
      return EPCTX_ERROR(kInvalidArgument, "input has rank {}, expected at least 2", xs.size());
    }
    const int64_t channels = xs[1];
    for (const auto& [t, name] : {std::pair{scale, "scale"}, std::pair{bias, "B"}}) {
      if (t->shape().size() != 1 || t->shape()[0] != channels) {
        return EPCTX_ERROR(kInvalidArgument, "input {} has shape {}, expected [{}]", name,
                           ShapeToString(t->shape()), channels);
      }
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, xs));
    EPCTX_ASSIGN_OR_RETURN(const int64_t inner, CheckedDimProduct(xs, 2, xs.size()));
    // Instance normalization is group normalization with a group per channel.
    NormalizeChannelGroups(x->data_as<float>(), xs[0], channels, channels, inner,
                           scale->data_as<float>(), bias->data_as<float>(), /*per_channel=*/true,
                           epsilon_, y->mutable_data_as<float>(),
                           ThreadsFor(ctx.num_threads(), x->element_count()));
    return Status::Ok();
  }

 private:
  InstanceNormKernel() = default;
  float epsilon_ = 1e-5f;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateInstanceNormalization(const NodeInfo& node) {
  return InstanceNormKernel::Create(node);
}

}  // namespace epctx::exec::kernels
