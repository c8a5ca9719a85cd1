// com.microsoft SkipLayerNormalization and SkipSimplifiedLayerNormalization (ONNX Runtime's
// fusions of a transformer's residual addition with the normalization after it), with ONNX
// Runtime 1.30's CPU semantics:
//   sum = input + skip (+ bias), each row of the last dim (hidden size H) normalized:
//   Skip:           (sum - mean) / sqrt(var + epsilon) * gamma (+ beta)
//   SkipSimplified:  sum / sqrt(mean(sum^2) + epsilon) * gamma
// Inputs input [B, S, H] or [T, H], skip, gamma [H], then beta [H] (SkipLayerNormalization only)
// and bias [H], both optional. Outputs output (input's shape), mean and inv_std_var (input's
// shape with the last dim 1; the simplified op's mean is 0), input_skip_bias_sum (input's shape),
// all optional after the first. A skip of another shape than input's is allowed when input is
// 3-D and the skip's last two dims are input's ([S, H], [1, S, H]): skip element i is read at
// i modulo its size, which repeats it over the batch (ORT reads any batch count that way).
// epsilon defaults to 1e-12, the schema's default. float32 only.
#include <cmath>
#include <memory>
#include <vector>

#include "exec/kernels/common/eigen.h"
#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/norm/norm_stats.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// Input `t` (when present) is a vector of the hidden size.
Status ExpectHiddenVector(const Tensor* t, int64_t hidden, std::string_view name) {
  if (t == nullptr) return Status::Ok();
  EPCTX_RETURN_IF_ERROR(ExpectDtype(*t, DataType::kFloat32, name));
  if (t->shape().size() != 1 || t->shape()[0] != hidden) {
    return EPCTX_ERROR(kInvalidArgument, "input {} has shape {}, expected [{}] (the hidden size)",
                       name, ShapeToString(t->shape()), hidden);
  }
  return Status::Ok();
}

// The skip's shape against the input's, as ONNX Runtime checks it.
Status CheckSkip(const std::vector<int64_t>& in, const std::vector<int64_t>& skip) {
  if (skip.size() != 2 && skip.size() != 3) {
    return EPCTX_ERROR(kInvalidArgument, "input skip has rank {}, expected 2 or 3", skip.size());
  }
  if (skip == in) return Status::Ok();
  const bool ok =
      in.size() == 3 && skip[skip.size() - 1] == in[2] && skip[skip.size() - 2] == in[1];
  if (!ok) {
    return EPCTX_ERROR(kInvalidArgument,
                       "input skip has shape {}, which is neither input's shape {} nor, for a 3-D "
                       "input, one with its last two dims",
                       ShapeToString(skip), ShapeToString(in));
  }
  return Status::Ok();
}

class SkipLayerNormKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool simplified) {
    auto kernel = std::unique_ptr<SkipLayerNormKernel>(new SkipLayerNormKernel());
    kernel->simplified_ = simplified;
    EPCTX_ASSIGN_OR_RETURN(kernel->epsilon_, node.attrs->GetFloat("epsilon", 1e-12f));
    if (!(kernel->epsilon_ >= 0)) {
      return EPCTX_ERROR(kInvalidArgument, "epsilon is {}, it must be 0 or more", kernel->epsilon_);
    }
    const size_t inputs = simplified ? 4 : 5;
    if (node.inputs.size() > inputs) {
      return EPCTX_ERROR(kInvalidArgument, "{} takes at most {} inputs, the node has {}",
                         node.op_type, inputs, node.inputs.size());
    }
    kernel->mean_output_ = OutputPresent(node, 1);
    kernel->inv_std_output_ = OutputPresent(node, 2);
    kernel->sum_output_ = OutputPresent(node, 3);
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "input"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "skip"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 2, DataType::kFloat32, "gamma"));
    if (!simplified) EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 3, DataType::kFloat32, "beta"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, inputs - 1, DataType::kFloat32, "bias"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* input, RequiredInput(ctx, 0, "input"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* skip, RequiredInput(ctx, 1, "skip"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* gamma, RequiredInput(ctx, 2, "gamma"));
    const Tensor* beta = simplified_ ? nullptr : ctx.input(3);
    const Tensor* bias = ctx.input(simplified_ ? 3 : 4);
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*input, DataType::kFloat32, "input"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*skip, DataType::kFloat32, "skip"));
    const std::vector<int64_t>& in = input->shape();
    if (in.size() != 2 && in.size() != 3) {
      return EPCTX_ERROR(kInvalidArgument, "input input has rank {}, expected 2 or 3", in.size());
    }
    const int64_t hidden = in.back();
    if (hidden < 1) {
      return EPCTX_ERROR(kInvalidArgument, "input input has shape {}: the hidden size is 0",
                         ShapeToString(in));
    }
    EPCTX_RETURN_IF_ERROR(CheckSkip(in, skip->shape()));
    if (skip->element_count() == 0 && input->element_count() > 0) {
      return EPCTX_ERROR(kInvalidArgument, "input skip has shape {}, with nothing to add",
                         ShapeToString(skip->shape()));
    }
    EPCTX_RETURN_IF_ERROR(ExpectHiddenVector(gamma, hidden, "gamma"));
    EPCTX_RETURN_IF_ERROR(ExpectHiddenVector(beta, hidden, "beta"));
    EPCTX_RETURN_IF_ERROR(ExpectHiddenVector(bias, hidden, "bias"));

    EPCTX_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DataType::kFloat32, in));
    std::vector<int64_t> stat_shape = in;
    stat_shape.back() = 1;
    float* mean_out = nullptr;
    float* inv_std_out = nullptr;
    float* sum_out = nullptr;
    if (mean_output_) {
      EPCTX_ASSIGN_OR_RETURN(Tensor * t, ctx.AllocateOutput(1, DataType::kFloat32, stat_shape));
      mean_out = t->mutable_data_as<float>();
    }
    if (inv_std_output_) {
      EPCTX_ASSIGN_OR_RETURN(Tensor * t, ctx.AllocateOutput(2, DataType::kFloat32, stat_shape));
      inv_std_out = t->mutable_data_as<float>();
    }
    if (sum_output_) {
      EPCTX_ASSIGN_OR_RETURN(Tensor * t, ctx.AllocateOutput(3, DataType::kFloat32, in));
      sum_out = t->mutable_data_as<float>();
    }
    const float* xp = input->data_as<float>();
    const float* sp = skip->data_as<float>();
    const int64_t skip_size = skip->element_count();
    const float* gp = gamma->data_as<float>();
    const float* betap = beta != nullptr ? beta->data_as<float>() : nullptr;
    const float* biasp = bias != nullptr ? bias->data_as<float>() : nullptr;
    float* yp = out->mutable_data_as<float>();
    const int64_t rows = input->element_count() / hidden;
    const int nt = ThreadsFor(ctx.num_threads(), input->element_count());
    ParallelForRanges(nt, rows, 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t offset = r * hidden;
        // The sum goes where it is asked for, else into the output, normalized there in place.
        float* sum = (sum_out != nullptr ? sum_out : yp) + offset;
        const ConstArrayMapF x(xp + offset, hidden);
        const ConstArrayMapF s(sp + offset % skip_size, hidden);
        if (biasp != nullptr) {
          ArrayMapF(sum, hidden) = x + s + ConstArrayMapF(biasp, hidden);
        } else {
          ArrayMapF(sum, hidden) = x + s;
        }
        float mean = 0;
        float inv_std = 0;
        if (simplified_) {
          inv_std = InverseRms(sum, hidden, epsilon_);
          ScaleRow(sum, inv_std, gp, yp + offset, hidden);
        } else {
          const MeanVar mv = MeanAndVariance(sum, hidden);
          mean = static_cast<float>(mv.mean);
          inv_std = static_cast<float>(1.0 / std::sqrt(mv.variance + epsilon_));
          CenterScaleRow(sum, mean, inv_std, gp, betap, yp + offset, hidden);
        }
        if (mean_out != nullptr) mean_out[r] = mean;
        if (inv_std_out != nullptr) inv_std_out[r] = inv_std;
      }
    });
    return Status::Ok();
  }

 private:
  SkipLayerNormKernel() = default;
  bool simplified_ = false;
  float epsilon_ = 1e-12f;
  bool mean_output_ = false;
  bool inv_std_output_ = false;
  bool sum_output_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateSkipLayerNormalization(const NodeInfo& node) {
  return SkipLayerNormKernel::Create(node, /*simplified=*/false);
}

Result<std::unique_ptr<Kernel>> CreateSkipSimplifiedLayerNormalization(const NodeInfo& node) {
  return SkipLayerNormKernel::Create(node, /*simplified=*/true);
}

}  // namespace epctx::exec::kernels
