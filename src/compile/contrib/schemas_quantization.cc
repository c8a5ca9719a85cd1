// Schemas of ONNX Runtime's weight-only quantized operators: MatMulNBits (int4/int8 weights in
// blocks along K, a scale per block, optional zero points).
#include "compile/contrib/contrib_schemas.h"
#include "compile/contrib/schema_helpers.h"

namespace epctx::compile::contrib {
namespace {

// Y = A x dequantize(B)^T (+ bias): A [..., K] -> Y [..., N].
void InferMatMulNBits(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const int64_t n = onnx::getAttribute(ctx, "N", -1);
  if (n < 0) return;
  ShapeWithLastDim(ctx, 0, 0, n);
}

onnx::OpSchema MatMulNBits() {
  using onnx::AttributeProto;
  using onnx::OpSchema;
  OpSchema s;
  s.SetName("MatMulNBits")
      .SetDomain(kMicrosoftDomain)
      .SinceVersion(1)
      .Attr("K", "size of each input feature", AttributeProto::INT)
      .Attr("N", "size of each output feature", AttributeProto::INT)
      .Attr("bits", "bits of a quantized weight (2, 4 or 8)", AttributeProto::INT,
            static_cast<int64_t>(4))
      .Attr("block_size", "weights per block along K, a power of 2 of at least 16",
            AttributeProto::INT)
      .Attr("accuracy_level", "the least precise arithmetic allowed (4: int8 activations)",
            AttributeProto::INT, static_cast<int64_t>(0))
      .Input(0, "A", "[..., K]", "T1")
      .Input(1, "B", "[N, n_blocks, block_size * bits / 8]", "T2")
      .Input(2, "scales", "one per block", "T1")
      .Input(3, "zero_points", "one per block, packed as B when uint8", "T3", OpSchema::Optional)
      .Input(4, "g_idx", "block of each K index", "T4", OpSchema::Optional)
      .Input(5, "bias", "[N]", "T1", OpSchema::Optional)
      .Output(0, "Y", "[..., N]", "T1")
      .TypeConstraint("T1", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"}, "")
      .TypeConstraint("T2", {"tensor(uint8)", "tensor(int32)"}, "")
      .TypeConstraint("T3",
                      {"tensor(uint8)", "tensor(int32)", "tensor(float16)", "tensor(float)",
                       "tensor(bfloat16)"},
                      "")
      .TypeConstraint("T4", {"tensor(int32)"}, "")
      .TypeAndShapeInferenceFunction(InferMatMulNBits);
  return s;
}

}  // namespace

void RegisterQuantizationSchemas() {
  RegisterOne(MatMulNBits());
}

}  // namespace epctx::compile::contrib
