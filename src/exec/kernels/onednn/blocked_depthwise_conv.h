// A 2-D depthwise convolution (one group per channel, one output per group, no dilation) of
// float32 activations in 16-channel blocks (nChw16c) by weights in oneDNN's "Goihw16g" layout,
// by our own code on AVX-512. oneDNN's jit_dw runs it at about the same speed but makes its code
// per problem, 0.07-0.4 ms of a thread each on a Zen 4 core, which a small CNN's first run
// waited for (MobileNetV2: 10 problems, EfficientNet-B0: 12). Each output pixel of a block is one
// vector: the sum over the window of input vector times weight vector, no broadcasts.
#pragma once

#include <cstdint>
#include <span>

#include "exec/kernels/onednn/post_ops.h"

namespace epctx::exec::kernels::onednn {

struct BlockedDepthwiseProblem {
  int64_t batch = 0;
  int64_t channels = 0;
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 0, kernel_w = 0, stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
};

// Whether this build computes them (compiled with AVX-512F).
bool BlockedDepthwiseConvAvailable();

// Whether the pass takes windows `kernel_w` wide at column stride `stride_w`: 3 or 5, at 1 or 2
// (compiled for each, their offsets constants).
bool BlockedDepthwiseWindowSupported(int64_t kernel_w, int64_t stride_w);

// y = the depthwise convolution of x by w (+ bias), then `ops` in order (kAddTensor adding
// `residual`, of y's layout), on up to `threads` threads. x: [batch]
// [ceil(channels/16)][in_h][in_w][16], w: [ceil(channels/16)][kernel_h][kernel_w][16], y:
// [batch][ceil(channels/16)][out_h][out_w][16], bias: [channels] or null. Window positions
// outside the input are padding (zeros). Output channels past `channels` are written as zeros.
// Requires BlockedDepthwiseConvAvailable(), BlockedDepthwiseWindowSupported(kernel_w, stride_w),
// every op of `ops` plain (LeadingPlainPostOpCount) and positive sizes and strides.
void BlockedDepthwiseConv(const BlockedDepthwiseProblem& p, const float* x, const float* w,
                          const float* bias, std::span<const PostOp> ops, const float* residual,
                          float* y, int threads);

}  // namespace epctx::exec::kernels::onednn
