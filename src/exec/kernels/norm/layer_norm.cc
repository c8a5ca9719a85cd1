// LayerNormalization (opset 17): every row of prod(dims[axis:]) elements is normalized to zero
// mean and unit variance, then scaled and shifted by Scale and B, which broadcast to
// dims[axis:]. The optional outputs Mean and InvStdDev have shape dims[:axis] + [1, ...].
// float32, with statistics accumulated in double.
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

class LayerNormKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<LayerNormKernel>(new LayerNormKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->axis_, node.attrs->GetInt("axis", -1));
    EPCTX_ASSIGN_OR_RETURN(kernel->epsilon_, node.attrs->GetFloat("epsilon", 1e-5f));
    EPCTX_ASSIGN_OR_RETURN(int64_t stash, node.attrs->GetInt("stash_type", 1));
    if (stash != 1) {
      return EPCTX_ERROR(kUnsupported, "stash_type {} is not supported (only 1, float32)", stash);
    }
    kernel->mean_output_ = OutputPresent(node, 1);
    kernel->inv_std_output_ = OutputPresent(node, 2);
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "Scale"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 2, DataType::kFloat32, "B"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* scale, RequiredInput(ctx, 1, "Scale"));
    const Tensor* bias = ctx.input(2);
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    const std::vector<int64_t>& xs = x->shape();
    EPCTX_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(axis_, static_cast<int64_t>(xs.size()), "axis"));
    const std::vector<int64_t> normalized(xs.begin() + axis, xs.end());
    EPCTX_ASSIGN_OR_RETURN(BroadcastRow s, BroadcastToRow(*scale, normalized, "Scale"));
    BroadcastRow b;
    if (bias != nullptr) {
      EPCTX_ASSIGN_OR_RETURN(b, BroadcastToRow(*bias, normalized, "B"));
    }
    EPCTX_ASSIGN_OR_RETURN(const int64_t rows, CheckedDimProduct(xs, 0, static_cast<size_t>(axis)));
    EPCTX_ASSIGN_OR_RETURN(const int64_t len, CheckedDimProduct(normalized));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, xs));
    std::vector<int64_t> stat_shape(xs.begin(), xs.begin() + axis);
    stat_shape.resize(xs.size(), 1);
    float* mean_out = nullptr;
    float* inv_std_out = nullptr;
    if (mean_output_) {
      EPCTX_ASSIGN_OR_RETURN(Tensor * m, ctx.AllocateOutput(1, DataType::kFloat32, stat_shape));
      mean_out = m->mutable_data_as<float>();
    }
    if (inv_std_output_) {
      EPCTX_ASSIGN_OR_RETURN(Tensor * v, ctx.AllocateOutput(2, DataType::kFloat32, stat_shape));
      inv_std_out = v->mutable_data_as<float>();
    }
    const float* xp = x->data_as<float>();
    float* yp = y->mutable_data_as<float>();
    const float* sp = s.data;
    const float* bp = b.data;
    const double eps = epsilon_;
    const int nt = ThreadsFor(ctx.num_threads(), x->element_count());
    ParallelForRanges(nt, rows, 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const float* in = xp + r * len;
        float* out = yp + r * len;
        const MeanVar mv = MeanAndVariance(in, len);
        const float mean = static_cast<float>(mv.mean);
        const float inv_std = static_cast<float>(1.0 / std::sqrt(mv.variance + eps));
        if (bp != nullptr) {
          for (int64_t i = 0; i < len; ++i) out[i] = (in[i] - mean) * inv_std * sp[i] + bp[i];
        } else {
          for (int64_t i = 0; i < len; ++i) out[i] = (in[i] - mean) * inv_std * sp[i];
        }
        if (mean_out != nullptr) mean_out[r] = mean;
        if (inv_std_out != nullptr) inv_std_out[r] = inv_std;
      }
    });
    return Status::Ok();
  }

 private:
  LayerNormKernel() = default;
  int64_t axis_ = -1;
  float epsilon_ = 1e-5f;
  bool mean_output_ = false;
  bool inv_std_output_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateLayerNormalization(const NodeInfo& node) {
  return LayerNormKernel::Create(node);
}

}  // namespace epctx::exec::kernels
