// com.microsoft Attention: the self-attention ONNX Runtime's transformer optimizer writes for BERT-
// and GPT-2-style models (one projection [hidden, 3 hidden] for Q, K and V, a mask_index, and for
// GPT-2 a past/present of [2, B, N, T, H]). No kernel runs it: its schema carries a function body
// of ONNX operators, built per node, that the compiler expands (function_inliner.cc), so that it
// runs on the kernels a PyTorch export's attention already compiles to (the projection on a packed
// oneDNN matmul with its bias, the scores' scale, mask and softmax on MaskedSoftmax, or all of it
// on com.epctx Attention when there is no mask).
//
// The body follows ONNX Runtime 1.30's CPU kernel: the projection plus its bias split into Q, K
// and V of N heads, a GPT-2 past's keys and values before the new ones (and the present made of
// them), then the scaled attention with ORT's additive mask from mask_index ([B] end positions,
// [2B] end then start positions, [B, T] or [B, S, T] raw 0/1 masks), unidirectional and
// attention_bias (attention_body.h). Not expanded (the node is then refused as an operator no
// kernel runs, with the reason logged): float16 inputs, unequal Q/K/V sizes in qkv_hidden_sizes,
// no bias (ORT's CPU kernel refuses that too), a 4-D (Megatron) mask, past_present_share_buffer,
// do_rotary, and an input whose rank or weights' shape the compiler does not know.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "compile/contrib/attention_body.h"
#include "compile/contrib/contrib_schemas.h"
#include "compile/contrib/schema_helpers.h"
#include "util/logging.h"

namespace epctx::compile::contrib {
namespace {

enum AttentionInput { kInput, kWeights, kBias, kMask, kPast, kAttentionBias, kPastLength };

// Why the node cannot be expanded, or empty when it can; `width` gets the width of each of Q, K
// and V (num_heads x the head size).
std::string AttentionRefusal(const onnx::FunctionBodyBuildContext& ctx, int64_t heads,
                             int64_t* width) {
  if (!IsFloat32(ctx, kInput)) return "only a float32 input is expanded";
  if (RankOf(ctx, kInput) != 3) return "the input's rank is not known to be 3";
  if (heads < 1) return "num_heads must be 1 or more";
  const std::optional<std::vector<int64_t>> w = StaticDims(ctx, kWeights);
  if (!w || w->size() != 2) return "the weights' shape is not known (a 2-D initializer)";
  const onnx::AttributeProto* sizes = ctx.getAttribute("qkv_hidden_sizes");
  if (sizes != nullptr && sizes->ints_size() > 0) {
    if (sizes->ints_size() != 3 || sizes->ints(0) != sizes->ints(1) ||
        sizes->ints(1) != sizes->ints(2)) {
      return "qkv_hidden_sizes with unequal Q, K and V sizes is not supported";
    }
  }
  if (!ctx.hasInput(kBias)) {
    return "an Attention without a bias is not run (ONNX Runtime 1.30's CPU kernel refuses it too)";
  }
  if ((*w)[1] % (3 * heads) != 0) {
    return "the weights' columns are not 3 x num_heads x the head size";
  }
  *width = (*w)[1] / 3;
  if (ctx.hasInput(kMask)) {
    const int rank = RankOf(ctx, kMask);
    if (rank < 1 || rank > 3) {
      return rank == 4 ? "a 4-D (Megatron) mask_index is not supported"
                       : "the mask_index's rank is not known to be 1, 2 or 3";
    }
  }
  if (ctx.hasInput(kPast) && RankOf(ctx, kPast) != 5) return "the past's rank is not 5";
  if (ctx.hasInput(kPastLength) || IntAttribute(ctx, "past_present_share_buffer", 0) != 0) {
    return "past_present_share_buffer (a past and present sharing one buffer) is not supported";
  }
  if (IntAttribute(ctx, "do_rotary", 0) != 0) return "do_rotary is not supported";
  return "";
}

bool BuildAttentionBody(const onnx::FunctionBodyBuildContext& ctx, const onnx::OpSchema& schema,
                        onnx::FunctionProto& body) {
  const int64_t heads = IntAttribute(ctx, "num_heads", 0);
  int64_t width = 0;
  const std::string refusal = AttentionRefusal(ctx, heads, &width);
  if (!refusal.empty()) {
    Logger().warn("com.microsoft.Attention is not expanded into ONNX operators: {}", refusal);
    return false;
  }
  const float given_scale = FloatAttribute(ctx, "scale", 0.0f);
  const float scale =
      given_scale != 0.0f ? given_scale : 1.0f / std::sqrt(static_cast<float>(width / heads));

  onnx::FunctionBuilder b(body);
  AddAttentionConstants(b);
  b.Const("split_shape", Int64s({0, 0, 3, heads, width / heads}, false));
  // Q, K, V as [B, N, S, head], from the one projection.
  b.Add(R"(
      qkv_mm = MatMul(input, weights)
      qkv = Add(qkv_mm, bias)
      qkv5 = Reshape(qkv, split_shape)
      q_bsnh = Gather <axis = 2> (qkv5, c0)
      k_bsnh = Gather <axis = 2> (qkv5, c1)
      v_bsnh = Gather <axis = 2> (qkv5, c2)
      q = Transpose <perm = [0, 2, 1, 3]> (q_bsnh)
      k_new = Transpose <perm = [0, 2, 1, 3]> (k_bsnh)
      v_new = Transpose <perm = [0, 2, 1, 3]> (v_bsnh))");
  // With a past [2, B, N, P, head], keys and values are the past's then the new ones.
  if (ctx.hasInput(kPast)) {
    b.Add(R"(
        past_k = Gather <axis = 0> (past, c0)
        past_v = Gather <axis = 0> (past, c1)
        k = Concat <axis = 2> (past_k, k_new)
        v = Concat <axis = 2> (past_v, v_new))");
  } else {
    b.Add("k = Identity(k_new)").Add("v = Identity(v_new)");
  }
  if (ctx.hasOutput(1)) {
    b.Add(R"(
        k_shape = Shape(k)
        present_part = Concat <axis = 0> (one1, k_shape)
        k_part = Reshape(k, present_part)
        v_part = Reshape(v, present_part)
        present = Concat <axis = 0> (k_part, v_part))");
  }
  ScaledAttention a;
  a.scale = scale;
  a.fill = FloatAttribute(ctx, "mask_filter_value", -10000.0f);
  a.causal = IntAttribute(ctx, "unidirectional", 0) != 0;
  if (ctx.hasInput(kMask)) {
    a.mask = "mask_index";
    a.mask_rank = RankOf(ctx, kMask);
  }
  if (ctx.hasInput(kAttentionBias)) a.attention_bias = "attention_bias";
  a.output = "output";
  a.output_width = width;
  AddScaledAttention(b, a);
  schema.BuildFunction(body);
  return true;
}

// output [B, S, V width]; present [2, B, N, P + S, head] where the dims are known.
void InferAttention(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (ctx.getNumOutputs() > 1) onnx::propagateElemTypeFromInputToOutput(ctx, 0, 1);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 1)) return;
  const onnx::TensorShapeProto& x = onnx::getInputShape(ctx, 0);
  const onnx::TensorShapeProto& w = onnx::getInputShape(ctx, 1);
  if (x.dim_size() != 3) fail_shape_inference("input must have rank 3 [batch, sequence, hidden]");
  if (w.dim_size() != 2) fail_shape_inference("weights must have rank 2");
  const onnx::AttributeProto* sizes = ctx.getAttribute("qkv_hidden_sizes");
  int64_t v_width = -1;
  if (sizes != nullptr && sizes->ints_size() == 3) {
    v_width = sizes->ints(2);
  } else if (w.dim(1).has_dim_value()) {
    v_width = w.dim(1).dim_value() / 3;
  }
  onnx::TensorShapeProto out;
  *out.add_dim() = x.dim(0);
  *out.add_dim() = x.dim(1);
  if (v_width >= 0)
    out.add_dim()->set_dim_value(v_width);
  else
    out.add_dim();
  onnx::updateOutputShape(ctx, 0, out);
  if (ctx.getNumOutputs() < 2 || !ctx.getOutputType(1)) return;
  const onnx::AttributeProto* heads = ctx.getAttribute("num_heads");
  onnx::TensorShapeProto present;
  present.add_dim()->set_dim_value(2);
  *present.add_dim() = x.dim(0);
  auto* n = present.add_dim();
  if (heads != nullptr) n->set_dim_value(heads->i());
  auto* total = present.add_dim();
  const bool has_past = ctx.getNumInputs() > kPast && ctx.getInputType(kPast) != nullptr &&
                        onnx::hasInputShape(ctx, kPast);
  if (x.dim(1).has_dim_value()) {
    if (!has_past) {
      total->set_dim_value(x.dim(1).dim_value());
    } else {
      const onnx::TensorShapeProto& p = onnx::getInputShape(ctx, kPast);
      if (p.dim_size() == 5 && p.dim(3).has_dim_value()) {
        total->set_dim_value(p.dim(3).dim_value() + x.dim(1).dim_value());
      }
    }
  }
  auto* head = present.add_dim();
  if (heads != nullptr && heads->i() > 0 && v_width >= 0) head->set_dim_value(v_width / heads->i());
  onnx::updateOutputShape(ctx, 1, present);
}

onnx::OpSchema Attention() {
  using onnx::AttributeProto;
  using onnx::OpSchema;
  OpSchema s;
  s.SetName("Attention")
      .SetDomain(kMicrosoftDomain)
      .SinceVersion(1)
      .Attr("num_heads", "attention heads", AttributeProto::INT)
      .Attr("unidirectional", "1: a query sees no later key", AttributeProto::INT,
            static_cast<int64_t>(0))
      .Attr("qkv_hidden_sizes", "widths of Q, K and V", AttributeProto::INTS, onnx::OPTIONAL_VALUE)
      .Attr("past_present_share_buffer", "past and present in one buffer", AttributeProto::INT,
            static_cast<int64_t>(0))
      .Attr("do_rotary", "rotary embedding inside", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("rotary_embedding_dim", "rotary width", AttributeProto::INT, onnx::OPTIONAL_VALUE)
      .Attr("mask_filter_value", "added where masked", AttributeProto::FLOAT, -10000.0f)
      .Attr("scale", "of Q K^T; 0: 1 / sqrt(head size)", AttributeProto::FLOAT,
            onnx::OPTIONAL_VALUE)
      .Input(kInput, "input", "[B, S, input hidden]", "T")
      .Input(kWeights, "weights", "[input hidden, 3 hidden]", "T")
      .Input(kBias, "bias", "[3 hidden]", "T", OpSchema::Optional)
      .Input(kMask, "mask_index", "[B], [2B], [B, T], [B, S, T] or [B, 1, M, M]", "M",
             OpSchema::Optional)
      .Input(kPast, "past", "[2, B, N, P, head]", "T", OpSchema::Optional)
      .Input(kAttentionBias, "attention_bias", "[B or 1, N or 1, S, T]", "T", OpSchema::Optional)
      .Input(kPastLength, "past_sequence_length", "with a shared past/present buffer", "M",
             OpSchema::Optional)
      .Output(0, "output", "[B, S, hidden]", "T")
      .Output(1, "present", "[2, B, N, P + S, head]", "T", OpSchema::Optional)
      .TypeConstraint("T", {"tensor(float)", "tensor(float16)"}, "")
      .TypeConstraint("M", {"tensor(int32)"}, "")
      .TypeAndShapeInferenceFunction(InferAttention)
      .SetContextDependentFunctionBodyBuilder(BuildAttentionBody);
  return s;
}

}  // namespace

void RegisterBertAttentionSchemas() {
  RegisterOne(Attention());
}

}  // namespace epctx::compile::contrib
