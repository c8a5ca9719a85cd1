// What the passes lowering to oneDNN (lower_convs_to_dnnl.cc, lower_matmuls_to_dnnl.cc,
// lower_batch_matmuls_to_dnnl.cc, fuse_dnnl_post_ops.cc) share: post-ops written on a node, and
// the constants and fused activations they take in.
#pragma once

#include <cstdint>
#include <string_view>

#include "compile/ir.h"
#include "exec/kernels/onednn/post_ops.h"

namespace epctx::compile {

using exec::kernels::onednn::PostOpKind;

// Whether `n` is the ONNX op `op`.
bool IsOnnx(const IrNode& n, std::string_view op);

// Appends a post-op to the node's post_ops, post_op_alpha and post_op_beta.
void AppendPostOp(IrNode& n, PostOpKind kind, float alpha, float beta);

// Whether value `index` (-1: none) is a float32 constant in its plain layout.
bool IsFloatConstant(const IrGraph& g, int index);

// A constant that is a bias for an output of `n` columns: [N] or [1, ..., 1, N].
bool IsBiasFor(const IrGraph& g, int v, int64_t n);

// Whether a convolution of input `x` may write rows wider than oneDNN's convolutions are made
// for (onednn::kMaxConvOutputWidth): x's innermost dim is static and above it. Such a
// convolution stays ONNX Conv.
bool TooWideForDnnlConv(const IrValue& x);

// A FusedGemm/FusedConv's activation as its first post-op; false when it has none we know.
bool TakeFusedActivation(IrNode& n);

}  // namespace epctx::compile
