// Schemas of the operators opset 18 added to ONNX (Debian's onnx 1.12 ends at opset 17), for
// which epctx has kernels: Mish, BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot, GroupNormalization
// (opset 18's form: scale and bias per group), CenterCropPad and Col2Im; and LpPool-18 (ceil_mode
// and dilations). Without them onnx's checker refuses such a model ("No Op registered for Mish
// with domain_version of 18").
#pragma once

namespace epctx::compile {

// Called by RegisterNewerOpsetSchemas once it has raised the ONNX domain's opset range.
void RegisterOpset18Operators();

}  // namespace epctx::compile
