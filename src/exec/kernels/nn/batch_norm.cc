// BatchNormalization in inference mode: y = (x - mean) / sqrt(var + epsilon) * scale + B per
// channel, folded into one multiply-add per element. Only output Y is produced.
#include <cmath>
#include <memory>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/nn/nn_ops.h"
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
    if (training != 0) {
      return EPCTX_ERROR(kUnsupported, "training_mode=1 is not supported (inference only)");
    }
    for (size_t i = 1; i < node.outputs.size(); ++i) {
      if (node.outputs[i].present) {
        return EPCTX_ERROR(kUnsupported,
                           "output {} (running statistics) is not supported (inference only)", i);
      }
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
    std::vector<float> mul(static_cast<size_t>(channels));
    std::vector<float> add(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) {
      const float inv = 1.0f / std::sqrt(params[3][c] + epsilon_);
      mul[c] = params[0][c] * inv;
      add[c] = params[1][c] - params[2][c] * mul[c];
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, x->shape()));
    const int64_t inner = DimProduct(x->shape(), 2, x->shape().size());
    const int64_t planes = x->shape()[0] * channels;
    const float* xp = x->data_as<float>();
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
  float epsilon_ = 1e-5f;
};

}  // namespace

void RegisterBatchNormalization(KernelRegistry& registry) {
  registry.Register("", "BatchNormalization", 1,
                    [](const NodeInfo& node) { return BatchNormKernel::Create(node, true); });
  registry.Register("", "BatchNormalization", 7,
                    [](const NodeInfo& node) { return BatchNormKernel::Create(node, false); });
}

}  // namespace epctx::exec::kernels
