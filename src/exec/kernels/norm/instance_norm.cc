// InstanceNormalization: every [N, C] plane of x [N, C, spatial...] is normalized to zero mean and
// unit variance, then scaled and shifted by its channel's scale and B. float32.
#include <cmath>
#include <memory>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
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
    EPCTX_ASSIGN_OR_RETURN(const int64_t planes, CheckedDimProduct(xs, 0, 2));
    EPCTX_ASSIGN_OR_RETURN(const int64_t inner, CheckedDimProduct(xs, 2, xs.size()));
    const float* xp = x->data_as<float>();
    const float* sp = scale->data_as<float>();
    const float* bp = bias->data_as<float>();
    float* yp = y->mutable_data_as<float>();
    const double eps = epsilon_;
    const int nt = ThreadsFor(ctx.num_threads(), x->element_count());
    ParallelForRanges(nt, planes, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const float* in = xp + p * inner;
        float* out = yp + p * inner;
        const MeanVar mv = MeanAndVariance(in, inner);
        const float mul = static_cast<float>(sp[p % channels] / std::sqrt(mv.variance + eps));
        const float add = static_cast<float>(bp[p % channels] - mv.mean * mul);
        for (int64_t i = 0; i < inner; ++i) out[i] = in[i] * mul + add;
      }
    });
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
