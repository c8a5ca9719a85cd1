// BatchNormalization: y = (x - mean) / sqrt(var + epsilon) * scale + B per channel, folded into
// one multiply-add per element. In inference mode mean and var are inputs and only Y is
// produced. In training mode (training_mode=1, opset 14 on) they are the batch statistics over
// every dim but 1 (population variance), and the optional outputs 1 and 2 are the running
// statistics input * momentum + batch * (1 - momentum).
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

constexpr const char* kParamNames[] = {"scale", "B", "input_mean", "input_var"};

class BatchNormKernel final : public Kernel {
 public:
  // `legacy`: opsets 1 and 6, where attribute is_test=1 selects inference (the default, 0, is
  // training). Opset 1's consumed_inputs is an optimization hint, ignored.
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool legacy) {
    auto kernel = std::unique_ptr<BatchNormKernel>(new BatchNormKernel());
    if (legacy) {
      EPCTX_ASSIGN_OR_RETURN(int64_t is_test, node.attrs->GetInt("is_test", 0));
      if (is_test == 0) {
        return EPCTX_ERROR(kUnsupported, "is_test=0 (training) is not supported (inference only)");
      }
    }
    EPCTX_ASSIGN_OR_RETURN(kernel->epsilon_, node.attrs->GetFloat("epsilon", 1e-5f));
    EPCTX_ASSIGN_OR_RETURN(int64_t spatial, node.attrs->GetInt("spatial", 1));
    if (spatial != 1) {
      return EPCTX_ERROR(kUnsupported, "spatial={} (per-activation statistics) is not supported",
                         spatial);
    }
    EPCTX_ASSIGN_OR_RETURN(int64_t training, node.attrs->GetInt("training_mode", 0));
    if (training != 0 && training != 1) {
      return EPCTX_ERROR(kInvalidArgument, "training_mode is {}, expected 0 or 1", training);
    }
    kernel->training_ = training == 1;
    if (kernel->training_ && node.opset < 14) {
      return EPCTX_ERROR(kInvalidArgument, "training_mode needs opset 14 or later, not {}",
                         node.opset);
    }
    EPCTX_ASSIGN_OR_RETURN(kernel->momentum_, node.attrs->GetFloat("momentum", 0.9f));
    for (size_t i = 1; i < node.outputs.size(); ++i) {
      if (!node.outputs[i].present) continue;
      // Before opset 14 extra outputs meant the five-output training form (with saved
      // statistics), which is not implemented.
      if (!kernel->training_ || i > 2) {
        return EPCTX_ERROR(kUnsupported,
                           "output {} (running statistics) is only supported with training_mode=1",
                           i);
      }
      kernel->running_present_[i - 1] = true;
    }
    for (size_t i = 0; i < 5; ++i) {
      EPCTX_RETURN_IF_ERROR(
          ExpectStaticDtype(node, i, DataType::kFloat32, i == 0 ? "X" : kParamNames[i - 1]));
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    if (x->shape().size() < 2) {
      return EPCTX_ERROR(kInvalidArgument, "input X has rank {}, expected at least 2",
                         x->shape().size());
    }
    const int64_t channels = x->shape()[1];
    const float* params[4];
    for (size_t i = 0; i < 4; ++i) {
      EPCTX_ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, i + 1, kParamNames[i]));
      EPCTX_RETURN_IF_ERROR(ExpectDtype(*t, DataType::kFloat32, kParamNames[i]));
      if (t->shape().size() != 1 || t->shape()[0] != channels) {
        return EPCTX_ERROR(kInvalidArgument, "input {} has shape {}, expected [{}]", kParamNames[i],
                           ShapeToString(t->shape()), channels);
      }
      params[i] = t->data_as<float>();
    }
    EPCTX_ASSIGN_OR_RETURN(const int64_t inner,
                           CheckedDimProduct(x->shape(), 2, x->shape().size()));
    EPCTX_ASSIGN_OR_RETURN(const int64_t planes, CheckedDimProduct(x->shape(), 0, 2));
    const float* xp = x->data_as<float>();
    const float* mean = params[2];
    const float* var = params[3];
    std::vector<float> batch_mean, batch_var;
    if (training_) {
      BatchStatistics(xp, x->shape()[0], channels, inner, batch_mean, batch_var);
      mean = batch_mean.data();
      var = batch_var.data();
      if (running_present_[0]) EPCTX_RETURN_IF_ERROR(WriteRunning(ctx, 1, params[2], batch_mean));
      if (running_present_[1]) EPCTX_RETURN_IF_ERROR(WriteRunning(ctx, 2, params[3], batch_var));
    }
    std::vector<float> mul(static_cast<size_t>(channels));
    std::vector<float> add(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) {
      const float inv = 1.0f / std::sqrt(var[c] + epsilon_);
      mul[c] = params[0][c] * inv;
      add[c] = params[1][c] - mean[c] * mul[c];
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, x->shape()));
    float* yp = y->mutable_data_as<float>();
    const int nt = ThreadsFor(ctx.num_threads(), x->element_count());
    ParallelForRanges(nt, planes, 1, [&](int64_t first, int64_t last) {
      for (int64_t plane = first; plane < last; ++plane) {
        const float a = mul[plane % channels];
        const float b = add[plane % channels];
        const float* in = xp + plane * inner;
        float* out = yp + plane * inner;
        for (int64_t i = 0; i < inner; ++i) out[i] = in[i] * a + b;
      }
    });
    return Status::Ok();
  }

 private:
  BatchNormKernel() = default;

  // Mean and population variance of every channel over the batch and spatial dims, summed in
  // double (two passes, so the variance does not cancel).
  static void BatchStatistics(const float* x, int64_t batch, int64_t channels, int64_t inner,
                              std::vector<float>& mean, std::vector<float>& var) {
    mean.assign(static_cast<size_t>(channels), 0.0f);
    var.assign(static_cast<size_t>(channels), 0.0f);
    const double count = static_cast<double>(batch * inner);
    for (int64_t c = 0; c < channels; ++c) {
      double sum = 0;
      for (int64_t n = 0; n < batch; ++n) {
        const float* plane = x + (n * channels + c) * inner;
        for (int64_t i = 0; i < inner; ++i) sum += plane[i];
      }
      const double m = count > 0 ? sum / count : 0.0;
      double sq = 0;
      for (int64_t n = 0; n < batch; ++n) {
        const float* plane = x + (n * channels + c) * inner;
        for (int64_t i = 0; i < inner; ++i) sq += (plane[i] - m) * (plane[i] - m);
      }
      mean[static_cast<size_t>(c)] = static_cast<float>(m);
      var[static_cast<size_t>(c)] = static_cast<float>(count > 0 ? sq / count : 0.0);
    }
  }

  // Output `index`: running = input * momentum + batch * (1 - momentum).
  Status WriteRunning(KernelContext& ctx, size_t index, const float* input,
                      const std::vector<float>& batch) const {
    const auto channels = static_cast<int64_t>(batch.size());
    EPCTX_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(index, DataType::kFloat32, {channels}));
    float* op = out->mutable_data_as<float>();
    for (size_t c = 0; c < batch.size(); ++c) {
      op[c] = input[c] * momentum_ + batch[c] * (1.0f - momentum_);
    }
    return Status::Ok();
  }

  float epsilon_ = 1e-5f;
  float momentum_ = 0.9f;
  bool training_ = false;
  std::array<bool, 2> running_present_{false, false};  // outputs running_mean, running_var
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateBatchNormalization(const NodeInfo& node) {
  return BatchNormKernel::Create(node, node.opset < 7);
}

}  // namespace epctx::exec::kernels
