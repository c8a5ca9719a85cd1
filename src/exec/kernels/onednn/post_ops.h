// Element-wise work a oneDNN primitive applies to its output while it is still in registers:
// the activations the compiler fuses into Conv/MatMul nodes, and the addition of a residual
// tensor. Stored in a node as `post_ops` (Ints: kinds, in order), `post_op_alpha` and
// `post_op_beta` (Floats: one each per kind). The ids are part of the blob's layout version.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "epctx/status.h"
#include "exec/attributes.h"
#include "exec/kernels/onednn/dnnl.h"

namespace epctx::exec::kernels::onednn {

enum class PostOpKind : int64_t {
  kRelu = 1,       // max(x, 0); alpha: slope below 0 (LeakyRelu)
  kClip = 2,       // min(max(x, alpha), beta)
  kSigmoid = 3,    // 1 / (1 + exp(-x))
  kSwish = 4,      // x * sigmoid(alpha * x)
  kHardSwish = 5,  // x * min(max(x / 6 + 1/2, 0), 1)
  kTanh = 6,
  kGeluErf = 7,    // x/2 * (1 + erf(x / sqrt 2))
  kGeluTanh = 8,   // x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
  kAddTensor = 9,  // adds the node's residual input, of the output's shape and layout
  kLinear = 10,    // alpha * x + beta
  kElu = 11,       // x > 0 ? x : alpha * (exp(x) - 1)
  kMish = 12,      // x * tanh(log(1 + exp(x)))
};

struct PostOp {
  PostOpKind kind;
  float alpha = 0;
  float beta = 0;
};

// The name used in messages and `epctx inspect`.
std::string_view PostOpName(PostOpKind kind);

// From the node's attributes; an empty list when absent.
Result<std::vector<PostOp>> ParsePostOps(const Attributes& attrs);

// oneDNN 2.6's JIT code for the transcendental activations runs at about half the speed of
// Eigen's vectorized math on this class of CPU, fused or not (measured on 1.2M floats, 1 thread:
// Swish 0.75 vs 0.36 ms, GELU 0.75 vs 0.40 ms, Tanh 0.59 vs 0.37 ms; a 1x1 convolution of
// EfficientNet takes 0.36 ms alone and 1.48 ms with Swish fused). So the activations of those
// kinds at the end of a chain are not given to the primitive: the kernel applies them after it
// (ApplyTrailingPostOps). Only activations with f(0) = 0 move, so the zero padding of a blocked
// layout stays zero. Returns how many leading ops of `ops` the primitive applies.
size_t PrimitivePostOpCount(std::span<const PostOp> ops);

// Applies ops[PrimitivePostOpCount(ops)..] to data[0, n) in place, on up to `threads` threads.
void ApplyTrailingPostOps(std::span<const PostOp> ops, float* data, int64_t n, int threads);

// Whether every op the primitive would apply (the first PrimitivePostOpCount) is one
// ApplyPrimitivePostOps computes: the residual addition, Relu (and LeakyRelu), Clip, Linear.
bool PrimitivePostOpsArePlain(std::span<const PostOp> ops);

// The ops of a list our own convolutions apply in registers (blocked_avx512.h): its leading
// "plain" ones (the residual addition, Relu/LeakyRelu, Clip, Linear), up to the first other.
size_t LeadingPlainPostOpCount(std::span<const PostOp> ops);
// Whether ApplyPostOpsToBuffer computes ops of this kind: the trailing activations, Sigmoid,
// Relu/LeakyRelu, Clip and Linear (not the residual addition).
bool AppliedToABuffer(PostOpKind kind);
// Applies `ops` (each AppliedToABuffer) in order to data[0, n), on up to `threads` threads.
void ApplyPostOpsToBuffer(std::span<const PostOp> ops, float* data, int64_t n, int threads);
// For kernels that compute without the primitive (one row through a packed matmul weight): the
// ops the primitive would apply, in order, to data[0, n), `residual` [n] for the addition;
// PrimitivePostOpsArePlain(ops) must hold.
void ApplyPrimitivePostOps(std::span<const PostOp> ops, float* data, const float* residual,
                           int64_t n);

// The oneDNN post-op chain of the ops the primitive applies (the first PrimitivePostOpCount);
// `residual` is the layout of the kAddTensor operand (required when the list has one, which must
// be at most one).
Result<dnnl::post_ops> ToDnnlPostOps(std::span<const PostOp> ops,
                                     const dnnl::memory::desc* residual);

// Index of the kAddTensor post-op in oneDNN's chain, or -1.
int ResidualIndex(std::span<const PostOp> ops);

}  // namespace epctx::exec::kernels::onednn
