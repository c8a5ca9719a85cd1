// ONNX opset 18's versions of the operators whose signature changed there, for Debian's onnx 1.12
// (which knows opsets up to 17): without them its checker refuses an opset-18 model that uses
// one ("Node () has input size 2 not in range [min=1, max=1]" for a ReduceMean with its axes as
// an input), though the kernels run them. PyTorch and other exporters write opset 18.
#pragma once

namespace epctx::compile {

// Registers, once, the opset-18 schemas of ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp,
// ReduceMax, ReduceMean, ReduceMin, ReduceProd and ReduceSumSquare (axes become an optional
// input), Split (num_outputs), Pad (an optional axes input) and Resize (antialias, axes,
// keep_aspect_ratio_policy), raising the ONNX domain's opset range to 18 for them. Their shape
// inference is onnx's for the previous version where the node uses nothing new, ours otherwise.
// Operators new in opset 18 (BitwiseAnd, Col2Im, GroupNormalization, Mish, ...) stay unknown: no
// kernel runs them.
void RegisterOpset18Schemas();

}  // namespace epctx::compile
