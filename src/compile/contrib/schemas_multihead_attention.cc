// com.microsoft MultiHeadAttention: attention over separate query, key and value projections,
// which ONNX Runtime's optimizer writes for cross-attention (T5, Whisper, Stable Diffusion's
// UNet) and self-attention with a KV cache. Like com.microsoft Attention
// (schemas_bert_attention.cc) it has no kernel: its schema carries a function body of ONNX
// operators built per node, which the compiler expands.
//
// The body follows ONNX Runtime 1.30's CPU kernel: query [B, S, D] plus its bias, split into N
// heads; key and value [B, L, D] plus theirs (after past_key / past_value [B, N, P, head] when
// given), or already [B, N, L, head] (a cross-attention cache, no bias); then the scaled
// attention with ORT's additive mask (attention_body.h) from key_padding_mask ([B, T] or
// [B, S, T] raw 0/1; [B] key lengths when its length is known to be the batch), unidirectional
// and attention_bias; present_key and present_value are the keys and values attended to (a
// float16 node is expanded as float32 between Casts, function_inliner.cc). Not expanded (logged
// with the reason, then refused as an op no kernel runs): packed QKV or KV, a bias with 4-D key and
// value, a past with them, the qk output, past_sequence_length and cache_indirection (a shared
// buffer, beam search), and shapes the compiler does not know (the query's and value's widths, the
// bias's length).
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "compile/body_refusal.h"
#include "compile/contrib/attention_body.h"
#include "compile/contrib/contrib_schemas.h"
#include "compile/contrib/schema_helpers.h"

namespace epctx::compile::contrib {
namespace {

enum MhaInput {
  kQuery,
  kKey,
  kValue,
  kMhaBias,
  kPaddingMask,
  kMhaAttentionBias,
  kPastKey,
  kPastValue,
  kMhaPastLength,
  kCacheIndirection
};

struct Widths {
  int64_t qk = 0;  // D: the query's and key's width
  int64_t v = 0;   // the value's width
};

// Why the node cannot be expanded, or empty when it can.
std::string MhaRefusal(const onnx::FunctionBodyBuildContext& ctx, int64_t heads, Widths* w) {
  if (!ctx.hasInput(kKey) || !ctx.hasInput(kValue)) {
    return "packed QKV or KV is not supported (key and value must both be given)";
  }
  for (int i : {kQuery, kKey, kValue}) {
    if (!IsFloat32(ctx, i)) return "only float32 and float16 query, key and value are expanded";
  }
  if (heads < 1) return "num_heads must be 1 or more";
  const int key_rank = RankOf(ctx, kKey);
  if (RankOf(ctx, kQuery) != 3 || (key_rank != 3 && key_rank != 4) ||
      RankOf(ctx, kValue) != key_rank) {
    return "query must be [B, S, D] and key and value both [B, L, D] or [B, N, L, head] (packed "
           "QKV or KV is not supported)";
  }
  const onnx::TypeProto* q = ctx.getInputType(kQuery);
  const onnx::TypeProto* v = ctx.getInputType(kValue);
  const auto& q_last = q->tensor_type().shape().dim(2);
  const auto& v_last = v->tensor_type().shape().dim(key_rank - 1);
  if (!q_last.has_dim_value() || !v_last.has_dim_value()) {
    return "the query's and value's last dims are not known";
  }
  w->qk = q_last.dim_value();
  w->v = key_rank == 3 ? v_last.dim_value() : v_last.dim_value() * heads;
  if (w->qk % heads != 0 || w->v % heads != 0) return "the widths are not a multiple of num_heads";
  if (ctx.hasInput(kMhaBias)) {
    if (key_rank == 4) return "a bias with key and value of [B, N, L, head] is not supported";
    const std::optional<std::vector<int64_t>> b = StaticDims(ctx, kMhaBias);
    if (!b || b->size() != 1 || (*b)[0] != 2 * w->qk + w->v) {
      return "the bias is not known to be [2 D + the value's width]";
    }
  }
  if (ctx.hasInput(kPastKey) != ctx.hasInput(kPastValue)) {
    return "past_key and past_value must be both given or both omitted";
  }
  if (ctx.hasInput(kPastKey) && key_rank == 4) {
    return "a past with key and value of [B, N, L, head] is not supported";
  }
  if (ctx.hasInput(kPaddingMask)) {
    const int rank = RankOf(ctx, kPaddingMask);
    if (rank == 1) {
      const std::optional<std::vector<int64_t>> m = StaticDims(ctx, kPaddingMask);
      const std::optional<std::vector<int64_t>> x = StaticDims(ctx, kQuery);
      if (!m || !x || (*m)[0] != (*x)[0]) {
        return "a 1-D key_padding_mask is expanded only when its length is known to be the batch";
      }
    } else if (rank != 2 && rank != 3) {
      return "the key_padding_mask's rank is not known to be 1, 2 or 3";
    }
  }
  if (ctx.hasOutput(3)) return "the qk output is not supported";
  if (ctx.hasInput(kMhaPastLength) || ctx.hasInput(kCacheIndirection)) {
    return "past_sequence_length and cache_indirection (a shared past/present buffer, beam "
           "search) are not supported";
  }
  return "";
}

std::vector<int64_t> Iota(int64_t from, int64_t count) {
  std::vector<int64_t> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) v[static_cast<size_t>(i)] = from + i;
  return v;
}

// [B, L, width] `x` (plus `bias` when not empty) as [B, N, L, head], named `out`.
void AddHeads(onnx::FunctionBuilder& b, const std::string& x, const std::string& bias,
              const std::string& out) {
  std::string src = x;
  if (!bias.empty()) {
    b.Add((out + "_biased = Add(" + x + ", " + bias + ")").c_str());
    src = out + "_biased";
  }
  b.Add((out + "_bsnh = Reshape(" + src + ", heads_shape)").c_str());
  b.Add((out + " = Transpose <perm = [0, 2, 1, 3]> (" + out + "_bsnh)").c_str());
}

bool BuildMultiHeadAttentionBody(const onnx::FunctionBodyBuildContext& ctx,
                                 const onnx::OpSchema& schema, onnx::FunctionProto& body) {
  const int64_t heads = IntAttribute(ctx, "num_heads", 0);
  Widths w;
  const std::string refusal = MhaRefusal(ctx, heads, &w);
  if (!refusal.empty()) {
    RefuseBody("com.microsoft.MultiHeadAttention", refusal);
    return false;
  }
  const bool bias = ctx.hasInput(kMhaBias);
  onnx::FunctionBuilder b(body);
  AddAttentionConstants(b);
  b.Const("heads_shape", Int64s({0, 0, heads, -1}, false));
  if (bias) {
    b.Const("q_cols", Int64s(Iota(0, w.qk), false))
        .Const("k_cols", Int64s(Iota(w.qk, w.qk), false))
        .Const("v_cols", Int64s(Iota(2 * w.qk, w.v), false));
    b.Add(R"(
        q_bias = Gather <axis = 0> (bias, q_cols)
        k_bias = Gather <axis = 0> (bias, k_cols)
        v_bias = Gather <axis = 0> (bias, v_cols))");
  }
  AddHeads(b, "query", bias ? "q_bias" : "", "q");
  if (RankOf(ctx, kKey) == 4) {
    b.Add("k = Identity(key)").Add("v = Identity(value)");
  } else {
    AddHeads(b, "key", bias ? "k_bias" : "", "k_new");
    AddHeads(b, "value", bias ? "v_bias" : "", "v_new");
    if (ctx.hasInput(kPastKey)) {
      b.Add(R"(
          k = Concat <axis = 2> (past_key, k_new)
          v = Concat <axis = 2> (past_value, v_new))");
    } else {
      b.Add("k = Identity(k_new)").Add("v = Identity(v_new)");
    }
  }
  if (ctx.hasOutput(1)) b.Add("present_key = Identity(k)");
  if (ctx.hasOutput(2)) b.Add("present_value = Identity(v)");
  ScaledAttention a;
  const float given_scale = FloatAttribute(ctx, "scale", 0.0f);
  a.scale = given_scale != 0.0f ? given_scale : 1.0f / std::sqrt(static_cast<float>(w.qk / heads));
  a.fill = FloatAttribute(ctx, "mask_filter_value", -10000.0f);
  a.causal = IntAttribute(ctx, "unidirectional", 0) != 0;
  if (ctx.hasInput(kPaddingMask)) {
    a.mask = "key_padding_mask";
    a.mask_rank = RankOf(ctx, kPaddingMask);
  }
  if (ctx.hasInput(kMhaAttentionBias)) a.attention_bias = "attention_bias";
  a.output = "output";
  a.output_width = w.v;
  AddScaledAttention(b, a);
  schema.BuildFunction(body);
  return true;
}

// output [B, S, V width]; present_key / present_value [B, N, T, head] where known.
void InferMultiHeadAttention(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  for (size_t o = 1; o < 3 && o < ctx.getNumOutputs(); ++o) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, o);
  }
  if (!onnx::hasInputShape(ctx, kQuery)) return;
  const onnx::TensorShapeProto& q = onnx::getInputShape(ctx, kQuery);
  if (q.dim_size() != 3) return;
  onnx::TensorShapeProto out;
  *out.add_dim() = q.dim(0);
  *out.add_dim() = q.dim(1);
  auto* width = out.add_dim();
  const onnx::AttributeProto* heads = ctx.getAttribute("num_heads");
  if (ctx.getNumInputs() > kValue && onnx::hasInputShape(ctx, kValue)) {
    const onnx::TensorShapeProto& v = onnx::getInputShape(ctx, kValue);
    if (v.dim_size() == 3 && v.dim(2).has_dim_value()) {
      width->set_dim_value(v.dim(2).dim_value());
    } else if (v.dim_size() == 4 && v.dim(3).has_dim_value() && heads != nullptr) {
      width->set_dim_value(v.dim(3).dim_value() * heads->i());
    }
  }
  onnx::updateOutputShape(ctx, 0, out);
}

onnx::OpSchema MultiHeadAttention() {
  using onnx::AttributeProto;
  using onnx::OpSchema;
  OpSchema s;
  s.SetName("MultiHeadAttention")
      .SetDomain(kMicrosoftDomain)
      .SinceVersion(1)
      .Attr("num_heads", "attention heads", AttributeProto::INT)
      .Attr("mask_filter_value", "added where masked", AttributeProto::FLOAT, -10000.0f)
      .Attr("scale", "of Q K^T; 0: 1 / sqrt(head size)", AttributeProto::FLOAT,
            onnx::OPTIONAL_VALUE)
      .Attr("unidirectional", "1: a query sees no later key", AttributeProto::INT,
            static_cast<int64_t>(0))
      .Input(kQuery, "query", "[B, S, D] (or packed)", "T")
      .Input(kKey, "key", "[B, L, D] or [B, N, L, head] (or packed)", "T", OpSchema::Optional)
      .Input(kValue, "value", "[B, L, Dv] or [B, N, L, head]", "T", OpSchema::Optional)
      .Input(kMhaBias, "bias", "[2 D + Dv]", "T", OpSchema::Optional)
      .Input(kPaddingMask, "key_padding_mask", "[B], [B, T] or [B, S, T]", "M", OpSchema::Optional)
      .Input(kMhaAttentionBias, "attention_bias", "[B or 1, N or 1, S, T]", "T", OpSchema::Optional)
      .Input(kPastKey, "past_key", "[B, N, P, head]", "T", OpSchema::Optional)
      .Input(kPastValue, "past_value", "[B, N, P, head]", "T", OpSchema::Optional)
      .Input(kMhaPastLength, "past_sequence_length", "with a shared past/present buffer", "M",
             OpSchema::Optional)
      .Input(kCacheIndirection, "cache_indirection", "beam search", "M", OpSchema::Optional)
      .Output(0, "output", "[B, S, Dv]", "T")
      .Output(1, "present_key", "[B, N, T, head]", "T", OpSchema::Optional)
      .Output(2, "present_value", "[B, N, T, head]", "T", OpSchema::Optional)
      .Output(3, "qk", "[B, N, S, T]", "QK", OpSchema::Optional)
      .TypeConstraint("T", {"tensor(float)", "tensor(float16)"}, "")
      .TypeConstraint("QK", {"tensor(float)", "tensor(float16)"}, "")
      .TypeConstraint("M", {"tensor(int32)"}, "")
      .TypeAndShapeInferenceFunction(InferMultiHeadAttention)
      .SetContextDependentFunctionBodyBuilder(BuildMultiHeadAttentionBody);
  return s;
}

}  // namespace

void RegisterMultiHeadAttentionSchemas() {
  RegisterOne(MultiHeadAttention());
}

}  // namespace epctx::compile::contrib
