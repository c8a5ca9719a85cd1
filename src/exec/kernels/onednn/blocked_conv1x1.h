// A 1x1 convolution (stride 1, no padding, one group) of float32 activations in 16-channel blocks
// (nChw16c) by weights in oneDNN's "ABcd16b16a" layout, by our own code on AVX-512. oneDNN's
// jit_1x1 runs such a convolution about as fast, but makes its code per problem, 0.1-1 ms of a
// thread each on a Zen 4 core (ONEDNN_VERBOSE create times); a small CNN's first run waited for
// them: MobileNetV2 has 24 distinct 1x1 problems, DenseNet-121 over 100. This code is compiled
// ahead, so a first run runs them at once. The compiler is unchanged: the weights stay packed in
// the layout oneDNN chose, which this reads.
#pragma once

#include <cstdint>
#include <span>

#include "exec/kernels/onednn/post_ops.h"

namespace epctx::exec::kernels::onednn {

struct Blocked1x1Problem {
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t pixels = 0;  // the product of the spatial dims (input's = output's)
};

// Whether this build computes them (compiled with AVX-512F).
bool Blocked1x1ConvAvailable();

// y = x * w (+ bias), then `ops` in order (kAddTensor adding `residual`, of y's layout), on up
// to `threads` threads. x:
// [batch][ceil(in/16)][pixels][16], w: [ceil(out/16)][ceil(in/16)][16 in] [16 out], y:
// [batch][ceil(out/16)][pixels][16], bias: [out] or null. Input channels past `in` are not read;
// output channels past `out` are written as zeros. `residual` may be `y` itself. Requires
// Blocked1x1ConvAvailable() and every op of `ops` plain (LeadingPlainPostOpCount).
void Blocked1x1Conv(const Blocked1x1Problem& p, const float* x, const float* w, const float* bias,
                    std::span<const PostOp> ops, const float* residual, float* y, int threads);

}  // namespace epctx::exec::kernels::onednn
