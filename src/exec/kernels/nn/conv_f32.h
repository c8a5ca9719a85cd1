// Float32 convolution: im2col + GEMM (no im2col for pointwise 1x1), a direct loop for
// depthwise, bias and activation applied to each output block right after it is computed.
#pragma once

#include <cstddef>
#include <cstdint>

#include "exec/kernels/common/activation.h"
#include "exec/kernels/nn/conv_shape.h"

namespace epctx::exec::kernels {

// How a problem is split over threads and how much scratch that needs.
struct ConvPlan {
  enum class Method {
    kDepthwise,  // one input channel per group: direct loops, no GEMM
    kTiled,      // tasks (image, group, column tile) spread over threads, im2col per tile
    kSplitRows,  // few output positions: shared im2col, output channels split over threads
  };
  Method method = Method::kTiled;
  bool pointwise = false;  // 1x1, stride 1, no padding: the input is already the GEMM operand
  int threads = 1;
  int64_t tiles = 1;   // column tiles per (image, group) for kTiled
  int64_t tile = 0;    // columns per tile
  int64_t chunks = 1;  // row chunks for kSplitRows
  size_t scratch_floats = 0;
};

ConvPlan PlanConvF32(const ConvShape& p, int threads);

// x [N, C, spatial...], w [M, C/group, kernel...] (row-major [M, K] per group), bias [M] or
// null, y [N, M, out spatial...]; scratch holds plan.scratch_floats.
void ConvF32(const ConvShape& p, const ConvPlan& plan, const float* x, const float* w,
             const float* bias, const Activation& act, float* y, float* scratch);

// The kDepthwise method (depthwise_conv_f32.cc).
void DepthwiseConvF32(const ConvShape& p, int threads, const float* x, const float* w,
                      const float* bias, const Activation& act, float* y);

}  // namespace epctx::exec::kernels
