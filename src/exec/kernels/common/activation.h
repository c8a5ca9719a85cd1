// The activations FusedConv/FusedGemm apply to their output while it is still in cache, and
// that the standalone Relu/Sigmoid/Clip kernels share.
#pragma once

#include <cstdint>
#include <vector>

#include "epctx/status.h"
#include "exec/attributes.h"

namespace epctx::exec::kernels {

struct Activation {
  enum class Kind { kNone, kRelu, kClip, kSigmoid };
  Kind kind = Kind::kNone;
  float lo = 0;  // kClip bounds
  float hi = 0;
};

// From the `activation` / `activation_params` attributes of the com.epctx fused ops.
Result<Activation> ParseFusedActivation(const Attributes& attrs);

// data[i] = act(data[i] + bias) for i < n.
void ApplyBiasActivation(const Activation& act, float bias, float* data, int64_t n);
// y[i] = act(x[i]); x may equal y.
void ApplyActivation(const Activation& act, const float* x, float* y, int64_t n);

}  // namespace epctx::exec::kernels
