// A float product of quantized operands, written as ONNX operators into a function body the way
// ONNX Runtime's integer kernels make it (DynamicQuantizeMatMul, MatMulIntegerToFloat,
// QAttention's projection):
//   out = float(MatMulInteger(a, w, a_zero, w_zero)) * (a_scale * w_scale) (+ bias)
// scaling the int32 sum by the product of the scales, then adding the bias, ORT's order.
#pragma once

#include <onnx/defs/function.h>

#include <cstdint>
#include <string>

namespace epctx::compile::contrib {

// Body value names; a_zero, w_zero and bias empty when absent. MatMulInteger takes its zero
// points positionally, so a w_zero without an a_zero gets a zero of a's element type (`a_type`,
// an onnx::TensorProto data type) before it. Intermediate values are named after `out`.
struct IntegerProduct {
  std::string a, w, a_zero, w_zero, a_scale, w_scale, bias, out;
  int32_t a_type = 0;
};
void AddIntegerProduct(onnx::FunctionBuilder& b, const IntegerProduct& p);

}  // namespace epctx::compile::contrib
