// Schemas of ONNX opsets newer than Debian's onnx 1.12 knows (it ends at 17), for the operators
// whose kernels run them: without them its checker refuses a model that uses one ("Node () has
// input size 2 not in range [min=1, max=1]" for an opset-18 ReduceMean with its axes as an input,
// "No Op registered for Gelu with domain_version of 20"). PyTorch and other exporters write
// opset 18 and later.
#pragma once

namespace epctx::compile {

// Registers, once, the opset-18 schemas of ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp,
// ReduceMax, ReduceMean, ReduceMin, ReduceProd and ReduceSumSquare (axes become an optional
// input), Split (num_outputs), Pad (an optional axes input) and Resize (antialias, axes,
// keep_aspect_ratio_policy), and Gelu of opset 20, raising the ONNX domain's opset range to 20
// for them. Shape inference is onnx's for the previous version where a node uses nothing new,
// ours otherwise. Then the operators opset 18 added (onnx_opset18_operators.h). Operators of
// opsets 19 and 20 without a kernel (AffineGrid, DeformConv, ...) stay unknown
// (unknown_operators.h refuses them).
void RegisterNewerOpsetSchemas();

}  // namespace epctx::compile
