// com.microsoft QEmbedLayerNormalization: EmbedLayerNormalization after ONNX Runtime's dynamic
// quantizer, its embedding tables, gamma and beta stored as uint8 or int8 with a scale and a zero
// point each (one value). No kernel runs it: its schema carries a function body, each table
// dequantized by DequantizeLinear (which the compiler folds into a float table, since the tables
// are initializers) feeding com.microsoft EmbedLayerNormalization's kernel
// (norm/embed_layer_norm.cc), which computes what ORT's kernel does with the dequantized values:
// the sums, their normalization, mask_index as the count of mask elements equal to 1 per row.
// Not expanded (logged, then refused as an op no kernel runs): scales that are not float32.
#include "compile/body_refusal.h"
#include "compile/contrib/contrib_schemas.h"
#include "compile/contrib/schema_helpers.h"

namespace epctx::compile::contrib {
namespace {

enum QEmbedInput {
  kQIds,
  kQSegmentIds,
  kQWords,
  kQPositions,
  kQSegments,
  kQGamma,
  kQBeta,
  kQEmbedMask,
  kQScales,          // 8..12: word, position, segment, gamma, beta
  kQZeroPoints = 13  // 13..17, in the same order
};
// The quantized inputs, their names, and the offset of each one's scale and zero point.
constexpr const char* kQTables[] = {"word_embedding", "position_embedding", "segment_embedding",
                                    "gamma", "beta"};
constexpr int kQTableInputs[] = {kQWords, kQPositions, kQSegments, kQGamma, kQBeta};

bool BuildQEmbedLayerNormBody(const onnx::FunctionBodyBuildContext& ctx,
                              const onnx::OpSchema& schema, onnx::FunctionProto& body) {
  for (int i = 0; i < 5; ++i) {
    if (i == 2 && !ctx.hasInput(kQSegments)) continue;
    if (!IsFloat32(ctx, kQScales + i)) {
      RefuseBody("com.microsoft.QEmbedLayerNormalization", "only float32 scales are expanded");
      return false;
    }
  }
  onnx::FunctionBuilder b(body);
  for (int i = 0; i < 5; ++i) {
    if (!ctx.hasInput(kQTableInputs[i])) continue;
    const std::string t = kQTables[i];
    b.Add((t + " = DequantizeLinear(" + t + "_quant, " + t + "_scale, " + t + "_zero_point)")
              .c_str());
  }
  onnx::NodeProto& embed = *body.add_node();
  embed.set_op_type("EmbedLayerNormalization");
  embed.set_domain(kMicrosoftDomain);
  for (const char* in : {"input_ids", "segment_ids", "word_embedding", "position_embedding",
                         "segment_embedding", "gamma", "beta", "mask"}) {
    const std::string name = in;
    const bool absent = (name == "segment_ids" && !ctx.hasInput(kQSegmentIds)) ||
                        (name == "segment_embedding" && !ctx.hasInput(kQSegments)) ||
                        (name == "mask" && !ctx.hasInput(kQEmbedMask));
    embed.add_input(absent ? "" : name);
  }
  embed.add_output("layernorm_out");
  embed.add_output(ctx.hasOutput(1) ? "mask_index_out" : "");
  *embed.add_attribute() = onnx::MakeAttribute("epsilon", FloatAttribute(ctx, "epsilon", 1e-12f));
  schema.BuildFunction(body);
  return true;
}

// layernorm_out [B, S, H] float32; mask_index_out [B] int32.
void InferQEmbedLayerNorm(onnx::InferenceContext& ctx) {
  onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::FLOAT);
  if (ctx.getNumOutputs() > 1) onnx::updateOutputElemType(ctx, 1, onnx::TensorProto::INT32);
  InferEmbeddingShapes(ctx, kQWords);
}

onnx::OpSchema QEmbedLayerNormalization() {
  using onnx::AttributeProto;
  using onnx::OpSchema;
  OpSchema s;
  s.SetName("QEmbedLayerNormalization")
      .SetDomain(kMicrosoftDomain)
      .SinceVersion(1)
      .Attr("epsilon", "added to the variance", AttributeProto::FLOAT, 1e-12f)
      .Input(kQIds, "input_ids", "[batch, sequence]", "T1")
      .Input(kQSegmentIds, "segment_ids", "[batch, sequence]", "T1", OpSchema::Optional)
      .Input(kQWords, "word_embedding_quant", "[vocabulary, hidden]", "T2")
      .Input(kQPositions, "position_embedding_quant", "[positions, hidden]", "T2")
      .Input(kQSegments, "segment_embedding_quant", "[segments, hidden]", "T2", OpSchema::Optional)
      .Input(kQGamma, "gamma_quant", "[hidden]", "T2")
      .Input(kQBeta, "beta_quant", "[hidden]", "T2")
      .Input(kQEmbedMask, "mask", "[batch, sequence]", "T1", OpSchema::Optional);
  for (int i = 0; i < 5; ++i) {
    const std::string t = kQTables[i];
    s.Input(kQScales + i, t + "_scale", "one value", "T",
            i == 2 ? OpSchema::Optional : OpSchema::Single);
  }
  for (int i = 0; i < 5; ++i) {
    const std::string t = kQTables[i];
    s.Input(kQZeroPoints + i, t + "_zero_point", "one value", "T2",
            i == 2 ? OpSchema::Optional : OpSchema::Single);
  }
  s.Output(0, "layernorm_out", "[batch, sequence, hidden]", "T")
      .Output(1, "mask_index_out", "[batch]", "T1", OpSchema::Optional)
      .TypeConstraint("T1", {"tensor(int32)"}, "")
      .TypeConstraint("T2", {"tensor(int8)", "tensor(uint8)"}, "")
      .TypeConstraint("T", {"tensor(float)"}, "")
      .TypeAndShapeInferenceFunction(InferQEmbedLayerNorm)
      .SetContextDependentFunctionBodyBuilder(BuildQEmbedLayerNormBody);
  return s;
}

}  // namespace

void RegisterQEmbedLayerNormSchemas() {
  RegisterOne(QEmbedLayerNormalization());
}

}  // namespace epctx::compile::contrib
