// com.microsoft DynamicQuantizeMatMul and MatMulIntegerToFloat: the integer matrix products of
// ONNX Runtime's dynamically quantized models (a float activation quantized per run to uint8, an
// int8 or uint8 weight, the int32 product scaled back to float). No kernel runs them: their
// schemas carry function bodies of ONNX operators that the compiler expands
// (function_inliner.cc), so that the product runs on the kernels ONNX's own form compiles to
// (MatMulInteger with a constant int8 weight on oneDNN's u8 x s8 matmul, packed in the blob):
//   DynamicQuantizeMatMul(A, B, b_scale, b_zero_point?, bias?):
//     a, a_scale, a_zero_point = DynamicQuantizeLinear(A)
//     Y = float(MatMulInteger(a, B, a_zero_point, b_zero_point)) * (a_scale * b_scale) (+ bias)
//   MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero_point?, b_zero_point?, bias?):
//     Y = float(MatMulInteger(A, B, a_zero_point, b_zero_point)) * (a_scale * b_scale) (+ bias)
// in ONNX Runtime 1.30's order of operations (its output processor scales the int32 sum by the
// product of the two scales, then adds the bias). b_scale and b_zero_point are one value or one per
// column of B. A float16 node is expanded as float32 between Casts (function_inliner.cc). Not
// expanded (logged, then refused as an op no kernel runs): scales of another float type.
#include <string>

#include "compile/body_refusal.h"
#include "compile/contrib/contrib_schemas.h"
#include "compile/contrib/integer_product_body.h"
#include "compile/contrib/schema_helpers.h"

namespace epctx::compile::contrib {
namespace {

bool BuildDynamicQuantizeMatMulBody(const onnx::FunctionBodyBuildContext& ctx,
                                    const onnx::OpSchema& schema, onnx::FunctionProto& body) {
  if (!IsFloat32(ctx, 0) || !IsFloat32(ctx, 2)) {
    RefuseBody("com.microsoft.DynamicQuantizeMatMul",
               "only float32 and float16 A and b_scale are expanded");
    return false;
  }
  onnx::FunctionBuilder b(body);
  b.Add("a, a_scale, a_zero_point = DynamicQuantizeLinear(A)");
  AddIntegerProduct(b, {"a", "B", "a_zero_point", ctx.hasInput(3) ? "b_zero_point" : "", "a_scale",
                        "b_scale", ctx.hasInput(4) ? "bias" : "", "Y", onnx::TensorProto::UINT8});
  schema.BuildFunction(body);
  return true;
}

bool BuildMatMulIntegerToFloatBody(const onnx::FunctionBodyBuildContext& ctx,
                                   const onnx::OpSchema& schema, onnx::FunctionProto& body) {
  const onnx::TypeProto* a = ctx.getInputType(0);
  if (!IsFloat32(ctx, 2) || !IsFloat32(ctx, 3) || a == nullptr || !a->has_tensor_type()) {
    RefuseBody("com.microsoft.MatMulIntegerToFloat",
               "only float32 and float16 scales and an A of known type are expanded");
    return false;
  }
  onnx::FunctionBuilder b(body);
  AddIntegerProduct(
      b, {"A", "B", ctx.hasInput(4) ? "a_zero_point" : "", ctx.hasInput(5) ? "b_zero_point" : "",
          "a_scale", "b_scale", ctx.hasInput(6) ? "bias" : "", "Y", a->tensor_type().elem_type()});
  schema.BuildFunction(body);
  return true;
}

// Y: A's shape with the last dim B's last, float32 (the scales' type).
void InferIntegerProductToFloat(onnx::InferenceContext& ctx, size_t scale_input) {
  onnx::propagateElemTypeFromInputToOutput(ctx, scale_input, 0);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 1)) return;
  const onnx::TensorShapeProto& b = onnx::getInputShape(ctx, 1);
  if (b.dim_size() != 2) return;
  const onnx::TensorShapeProto& a = onnx::getInputShape(ctx, 0);
  if (a.dim_size() < 1) fail_shape_inference("A must have rank 1 or more");
  onnx::TensorShapeProto out = a;
  *out.mutable_dim(out.dim_size() - 1) = b.dim(1);
  onnx::updateOutputShape(ctx, 0, out);
}

onnx::OpSchema DynamicQuantizeMatMul() {
  using onnx::OpSchema;
  OpSchema s;
  s.SetName("DynamicQuantizeMatMul")
      .SetDomain(kMicrosoftDomain)
      .SinceVersion(1)
      .Input(0, "A", "float activations [..., K]", "T1")
      .Input(1, "B", "[K, N]", "T2")
      .Input(2, "b_scale", "one, or one per column", "T1")
      .Input(3, "b_zero_point", "like b_scale", "T2", OpSchema::Optional)
      .Input(4, "bias", "[N]", "T1", OpSchema::Optional)
      .Output(0, "Y", "[..., N]", "T1")
      .TypeConstraint("T1", {"tensor(float)"}, "")
      .TypeConstraint("T2", {"tensor(int8)", "tensor(uint8)"}, "")
      .TypeAndShapeInferenceFunction(
          [](onnx::InferenceContext& ctx) { InferIntegerProductToFloat(ctx, 2); })
      .SetContextDependentFunctionBodyBuilder(BuildDynamicQuantizeMatMulBody);
  return s;
}

onnx::OpSchema MatMulIntegerToFloat() {
  using onnx::OpSchema;
  OpSchema s;
  s.SetName("MatMulIntegerToFloat")
      .SetDomain(kMicrosoftDomain)
      .SinceVersion(1)
      .Input(0, "A", "[..., K]", "T1")
      .Input(1, "B", "[K, N]", "T2")
      .Input(2, "a_scale", "one value", "T3")
      .Input(3, "b_scale", "one, or one per column", "T3")
      .Input(4, "a_zero_point", "one value", "T1", OpSchema::Optional)
      .Input(5, "b_zero_point", "like b_scale", "T2", OpSchema::Optional)
      .Input(6, "bias", "[N]", "T3", OpSchema::Optional)
      .Output(0, "Y", "[..., N]", "T3")
      .TypeConstraint("T1", {"tensor(int8)", "tensor(uint8)"}, "")
      .TypeConstraint("T2", {"tensor(int8)", "tensor(uint8)"}, "")
      .TypeConstraint("T3", {"tensor(float)", "tensor(float16)"}, "")
      .TypeAndShapeInferenceFunction(
          [](onnx::InferenceContext& ctx) { InferIntegerProductToFloat(ctx, 2); })
      .SetContextDependentFunctionBodyBuilder(BuildMatMulIntegerToFloatBody);
  return s;
}

}  // namespace

void RegisterQuantizedMatMulSchemas() {
  RegisterOne(DynamicQuantizeMatMul());
  RegisterOne(MatMulIntegerToFloat());
}

}  // namespace epctx::compile::contrib
