// Schemas of ONNX Runtime's weight-only quantized operators: MatMulNBits (int4/int8 weights in
// blocks along K, a scale per block, optional zero points) and GatherBlockQuantized (rows of such
// a table, dequantized: quantized token embeddings).
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

// Output: indices' shape in place of the gathered axis, the data's other dims, the quantized
// axis unpacked (x 8 / bits) when data is uint8; the scales' element type.
void InferGatherBlockQuantized(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 1)) return;
  const onnx::TensorShapeProto& data = onnx::getInputShape(ctx, 0);
  const onnx::TensorShapeProto& indices = onnx::getInputShape(ctx, 1);
  const int rank = data.dim_size();
  int64_t gather = onnx::getAttribute(ctx, "gather_axis", 0);
  int64_t quantize = onnx::getAttribute(ctx, "quantize_axis", 1);
  if (gather < 0) gather += rank;
  if (quantize < 0) quantize += rank;
  if (gather < 0 || gather >= rank || quantize < 0 || quantize >= rank) {
    fail_shape_inference("gather_axis or quantize_axis is out of range for rank ", rank);
  }
  const int64_t bits = onnx::getAttribute(ctx, "bits", 4);
  const bool packed = ctx.getInputType(0)->tensor_type().elem_type() == onnx::TensorProto::UINT8;
  onnx::TensorShapeProto out;
  for (int d = 0; d < rank; ++d) {
    if (d == gather) {
      for (const auto& i : indices.dim()) *out.add_dim() = i;
      continue;
    }
    auto* dim = out.add_dim();
    *dim = data.dim(d);
    if (d == quantize && packed && bits > 0 && bits < 8 && data.dim(d).has_dim_value()) {
      dim->set_dim_value(data.dim(d).dim_value() * (8 / bits));
    }
  }
  onnx::updateOutputShape(ctx, 0, out);
}

onnx::OpSchema GatherBlockQuantized() {
  using onnx::AttributeProto;
  using onnx::OpSchema;
  OpSchema s;
  s.SetName("GatherBlockQuantized")
      .SetDomain(kMicrosoftDomain)
      .SinceVersion(1)
      .Attr("gather_axis", "the axis gathered along", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("quantize_axis", "the axis quantized in blocks", AttributeProto::INT,
            static_cast<int64_t>(1))
      .Attr("block_size", "values per block, a power of 2 of at least 16", AttributeProto::INT,
            static_cast<int64_t>(128))
      .Attr("bits", "bits of a value (4 or 8) when data is uint8", AttributeProto::INT,
            static_cast<int64_t>(4))
      .Input(0, "data", "the quantized table", "T1")
      .Input(1, "indices", "rows to gather", "Tind")
      .Input(2, "scales", "one per block", "T2")
      .Input(3, "zero_points", "one per block, packed like data", "T1", OpSchema::Optional)
      .Output(0, "output", "the gathered rows, dequantized", "T2")
      .TypeConstraint("T1", {"tensor(uint8)"}, "")
      .TypeConstraint("T2", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"}, "")
      .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction(InferGatherBlockQuantized);
  return s;
}

}  // namespace

void RegisterQuantizationSchemas() {
  RegisterOne(MatMulNBits());
  RegisterOne(GatherBlockQuantized());
}

}  // namespace epctx::compile::contrib
