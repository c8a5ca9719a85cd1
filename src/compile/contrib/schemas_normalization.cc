// Schemas of ONNX Runtime's normalizations: SimplifiedLayerNormalization (RMS normalization, which
// ORT registers in the ONNX domain, so the checker refuses it there without a schema), the
// com.microsoft residual fusions SkipLayerNormalization and SkipSimplifiedLayerNormalization, and
// EmbedLayerNormalization (a BERT's embeddings and their normalization).
#include "compile/contrib/contrib_schemas.h"
#include "compile/contrib/schema_helpers.h"

namespace epctx::compile::contrib {
namespace {

// Output `output`: float32 (double for a double input 0), input 0's shape with the dims from
// `axis` on set to 1 (the per-row statistics).
void StatisticsOutput(onnx::InferenceContext& ctx, size_t output, int64_t axis) {
  if (ctx.getNumOutputs() <= output) return;
  const onnx::TypeProto* x = ctx.getInputType(0);
  const bool is_double = x != nullptr && x->tensor_type().elem_type() == onnx::TensorProto::DOUBLE;
  onnx::updateOutputElemType(ctx, output,
                             is_double ? onnx::TensorProto::DOUBLE : onnx::TensorProto::FLOAT);
  if (!onnx::hasInputShape(ctx, 0)) return;
  onnx::TensorShapeProto shape = onnx::getInputShape(ctx, 0);
  const int rank = shape.dim_size();
  if (axis < -rank || axis >= rank) {
    fail_shape_inference("axis ", axis, " is out of range for rank ", rank);
  }
  for (int d = static_cast<int>(axis < 0 ? axis + rank : axis); d < rank; ++d) {
    shape.mutable_dim(d)->clear_dim_param();
    shape.mutable_dim(d)->set_dim_value(1);
  }
  onnx::updateOutputShape(ctx, output, shape);
}

// Y takes the scale's type (V) and X's shape.
void InferSimplifiedLayerNorm(onnx::InferenceContext& ctx) {
  const onnx::TypeProto* scale = ctx.getInputType(1);
  if (scale != nullptr && scale->tensor_type().elem_type() != onnx::TensorProto::UNDEFINED) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
  } else {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  }
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
  StatisticsOutput(ctx, 1, onnx::getAttribute(ctx, "axis", -1));
}

onnx::OpSchema SimplifiedLayerNormalization() {
  using onnx::AttributeProto;
  using onnx::OpSchema;
  OpSchema s;
  s.SetName("SimplifiedLayerNormalization")
      .SetDomain("")
      .SinceVersion(1)
      .Attr("axis", "the first normalized dim", AttributeProto::INT, static_cast<int64_t>(-1))
      .Attr("epsilon", "added to the mean square", AttributeProto::FLOAT, 1e-5f)
      .Attr("stash_type", "precision of the statistics", AttributeProto::INT,
            static_cast<int64_t>(1))
      .Input(0, "X", "the tensor to normalize", "T")
      .Input(1, "scale", "broadcast to X", "V")
      .Output(0, "Y", "X's shape", "V")
      .Output(1, "inv_std_var", "1 / root mean square of each row", "U", OpSchema::Optional)
      .TypeConstraint(
          "T", {"tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"}, "")
      .TypeConstraint("U", {"tensor(float)", "tensor(double)"}, "")
      .TypeConstraint(
          "V", {"tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"}, "")
      .TypeAndShapeInferenceFunction(InferSimplifiedLayerNorm);
  return s;
}

// output and input_skip_bias_sum like input; mean and inv_std_var float32 per row.
void InferSkipLayerNorm(onnx::InferenceContext& ctx) {
  PropagateTypeAndShape(ctx, 0, 0);
  StatisticsOutput(ctx, 1, -1);
  StatisticsOutput(ctx, 2, -1);
  PropagateTypeAndShape(ctx, 0, 3);
}

onnx::OpSchema SkipNormalization(const char* name, bool simplified) {
  using onnx::AttributeProto;
  using onnx::OpSchema;
  OpSchema s;
  s.SetName(name)
      .SetDomain(kMicrosoftDomain)
      .SinceVersion(1)
      .Attr("epsilon", "added to the variance", AttributeProto::FLOAT, 1e-12f)
      .Input(0, "input", "[batch, sequence, hidden] or [tokens, hidden]", "T")
      .Input(1, "skip", "input's shape, or [1, sequence, hidden] or [sequence, hidden]", "T")
      .Input(2, "gamma", "[hidden]", "T");
  int next = 3;
  if (!simplified) s.Input(next++, "beta", "[hidden]", "T", OpSchema::Optional);
  s.Input(next, "bias", "[hidden], added before normalizing", "T", OpSchema::Optional)
      .Output(0, "output", "input's shape", "T")
      .Output(1, "mean", "per row (0 for the simplified op)", "U", OpSchema::Optional)
      .Output(2, "inv_std_var", "per row", "U", OpSchema::Optional)
      .Output(3, "input_skip_bias_sum", "input + skip + bias", "T", OpSchema::Optional)
      .TypeConstraint("T", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"}, "")
      .TypeConstraint("U", {"tensor(float)"}, "")
      .TypeAndShapeInferenceFunction(InferSkipLayerNorm);
  return s;
}

// output and embedding_sum [B, S, H] of the word table's type; mask_index [B] int32.
void InferEmbedLayerNorm(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
  if (ctx.getNumOutputs() > 1) onnx::updateOutputElemType(ctx, 1, onnx::TensorProto::INT32);
  if (ctx.getNumOutputs() > 2) onnx::propagateElemTypeFromInputToOutput(ctx, 2, 2);
  InferEmbeddingShapes(ctx, 2);
}

onnx::OpSchema EmbedLayerNormalization() {
  using onnx::AttributeProto;
  using onnx::OpSchema;
  OpSchema s;
  s.SetName("EmbedLayerNormalization")
      .SetDomain(kMicrosoftDomain)
      .SinceVersion(1)
      .Attr("epsilon", "added to the variance", AttributeProto::FLOAT, 1e-12f)
      .Attr("mask_index_type", "0: no mask_index, 1: [batch] (ORT's shape inference only)",
            AttributeProto::INT, onnx::OPTIONAL_VALUE)
      .Input(0, "input_ids", "[batch, sequence]", "T1")
      .Input(1, "segment_ids", "[batch, sequence]", "T1", OpSchema::Optional)
      .Input(2, "word_embedding", "[vocabulary, hidden]", "T")
      .Input(3, "position_embedding", "[positions, hidden]", "T")
      .Input(4, "segment_embedding", "[segments, hidden]", "T", OpSchema::Optional)
      .Input(5, "gamma", "[hidden]", "T")
      .Input(6, "beta", "[hidden]", "T")
      .Input(7, "mask", "[batch, sequence]", "T1", OpSchema::Optional)
      .Input(8, "position_ids", "[batch, sequence] or [1, sequence]", "T1", OpSchema::Optional)
      .Output(0, "output", "[batch, sequence, hidden]", "T")
      .Output(1, "mask_index", "[batch]: per row, the mask's elements equal to 1", "T1",
              OpSchema::Optional)
      .Output(2, "embedding_sum", "the sums before normalizing", "T", OpSchema::Optional)
      .TypeConstraint("T1", {"tensor(int32)"}, "")
      .TypeConstraint("T", {"tensor(float)", "tensor(float16)"}, "")
      .TypeAndShapeInferenceFunction(InferEmbedLayerNorm);
  return s;
}

}  // namespace

void RegisterNormalizationSchemas() {
  RegisterOne(EmbedLayerNormalization());
  RegisterOne(SimplifiedLayerNormalization());
  RegisterOne(SkipNormalization("SkipLayerNormalization", /*simplified=*/false));
  RegisterOne(SkipNormalization("SkipSimplifiedLayerNormalization", /*simplified=*/true));
}

}  // namespace epctx::compile::contrib
