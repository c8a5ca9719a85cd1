// Schemas of ONNX Runtime GenAI's attention operators as ONNX Runtime 1.30 declares them:
// GroupQueryAttention (the decoder attention with its KV cache, rotary embedding inside) and
// RotaryEmbedding. Their inference follows ORT's functions, with one departure: where
// total_sequence_length is not a constant, ORT gives present_key/present_value the past's
// sequence dim (right only when past and present share one max-length buffer); here that dim is
// left unknown, because a decode graph's present is one row longer than its past and a declared
// shape that every run contradicts would be refused by the executor.
#include <algorithm>
#include <optional>

#include "compile/contrib/contrib_schemas.h"
#include "compile/contrib/schema_helpers.h"

namespace epctx::compile::contrib {
namespace {

// Output 0 is the query's type and, without packing, its shape; packed QKV [B, S, (N + 2 kvN) H]
// gives [B, S, N H]. present_key/present_value take the past's type (the query's without a past)
// and the shape [B, kvN, max(total, P), H] when total_sequence_length is a constant.
void InferGroupQueryAttention(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const bool has_past_type = ctx.getNumInputs() > 3 && ctx.getInputType(3) != nullptr;
  if (ctx.getNumOutputs() >= 3) {
    const size_t key_from = has_past_type ? 3 : 0;
    const size_t value_from = has_past_type ? 4 : 0;
    onnx::propagateElemTypeFromInputToOutput(ctx, key_from, 1);
    onnx::propagateElemTypeFromInputToOutput(ctx, value_from, 2);
  }
  const int64_t heads = onnx::getAttribute(ctx, "num_heads", 0);
  const int64_t kv_heads = onnx::getAttribute(ctx, "kv_num_heads", 0);
  const bool packed = !(ctx.getNumInputs() > 2 && ctx.getInputType(2) != nullptr);
  int64_t head_size = 0;
  if (onnx::hasInputShape(ctx, 0)) {
    const onnx::TensorShapeProto& q = onnx::getInputShape(ctx, 0);
    if (q.dim_size() != 3) fail_shape_inference("query must have rank 3, not ", q.dim_size());
    const int64_t in_query = packed ? heads + 2 * kv_heads : heads;
    if (q.dim(2).has_dim_value() && in_query > 0) head_size = q.dim(2).dim_value() / in_query;
    if (!packed) {
      onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
    } else if (head_size > 0) {
      onnx::TensorShapeProto out;
      *out.add_dim() = q.dim(0);
      *out.add_dim() = q.dim(1);
      out.add_dim()->set_dim_value(head_size * heads);
      onnx::updateOutputShape(ctx, 0, out);
    }
  }

  const int64_t qk_output = onnx::getAttribute(ctx, "qk_output", 0);
  const bool qk_present = ctx.getNumOutputs() > 3;
  if (qk_output == 0 && qk_present) {
    fail_shape_inference("output_qk is given but qk_output is 0");
  }
  if (qk_output != 0 && !qk_present) {
    fail_shape_inference("qk_output is ", qk_output, " but output_qk is not given");
  }
  if (ctx.getNumOutputs() < 3) return;
  const std::optional<int64_t> total = ConstantIntInput(ctx, 6);
  if (qk_present) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 3);
    if (onnx::hasInputShape(ctx, 0) && total.has_value() && *total > 0 && heads > 0) {
      const onnx::TensorShapeProto& q = onnx::getInputShape(ctx, 0);
      onnx::TensorShapeProto qk;
      *qk.add_dim() = q.dim(0);
      qk.add_dim()->set_dim_value(heads);
      *qk.add_dim() = q.dim(1);
      qk.add_dim()->set_dim_value(*total);
      onnx::updateOutputShape(ctx, 3, qk);
    }
  }
  onnx::TensorShapeProto present;
  if (onnx::hasInputShape(ctx, 3)) {
    const onnx::TensorShapeProto& past = onnx::getInputShape(ctx, 3);
    if (past.dim_size() != 4)
      fail_shape_inference("past_key must have rank 4, not ", past.dim_size());
    *present.add_dim() = past.dim(0);
    *present.add_dim() = past.dim(1);
    if (total.has_value() && *total > 0 && past.dim(2).has_dim_value()) {
      present.add_dim()->set_dim_value(std::max(*total, past.dim(2).dim_value()));
    } else {
      present.add_dim();
    }
    *present.add_dim() = past.dim(3);
  } else if (!has_past_type && onnx::hasInputShape(ctx, 0) && kv_heads > 0 && head_size > 0) {
    *present.add_dim() = onnx::getInputShape(ctx, 0).dim(0);
    present.add_dim()->set_dim_value(kv_heads);
    if (total.has_value() && *total > 0) {
      present.add_dim()->set_dim_value(*total);
    } else {
      present.add_dim();
    }
    present.add_dim()->set_dim_value(head_size);
  } else {
    return;
  }
  onnx::updateOutputShape(ctx, 1, present);
  onnx::updateOutputShape(ctx, 2, present);
}

onnx::OpSchema GroupQueryAttention() {
  using onnx::AttributeProto;
  using onnx::OpSchema;
  OpSchema s;
  s.SetName("GroupQueryAttention")
      .SetDomain(kMicrosoftDomain)
      .SinceVersion(1)
      .Attr("num_heads", "heads of Q", AttributeProto::INT)
      .Attr("kv_num_heads", "heads of K and V", AttributeProto::INT)
      .Attr("scale", "scale of Q.K (default 1/sqrt(head_size))", AttributeProto::FLOAT, false)
      .Attr("causal", "1: each row sees the keys up to its own position; 0: all",
            AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("softcap", "scores become softcap * tanh(score / softcap) when above 0",
            AttributeProto::FLOAT, false)
      .Attr("local_window_size", "keys a row sees back from its own (-1: all)", AttributeProto::INT,
            static_cast<int64_t>(-1))
      .Attr("sliding_window_cache", "1: past and present hold a window of the sequence only",
            AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("do_rotary", "rotary embedding of Q and K", AttributeProto::INT, false)
      .Attr("rotary_interleaved", "rotate interleaved pairs instead of halves", AttributeProto::INT,
            false)
      .Attr("smooth_softmax", "add exp(0) to the softmax denominators", AttributeProto::INT,
            static_cast<int64_t>(-1))
      .Attr("qk_output", "output Q.K before (1) or after (2) the softmax", AttributeProto::INT,
            static_cast<int64_t>(0))
      .Attr("k_quant_type", "NONE, PER_TENSOR or PER_CHANNEL", AttributeProto::STRING,
            std::string("NONE"))
      .Attr("v_quant_type", "NONE, PER_TENSOR or PER_CHANNEL", AttributeProto::STRING,
            std::string("NONE"))
      .Attr("kv_cache_bit_width", "bits of a quantized KV cache (4 or 8)", AttributeProto::INT,
            false)
      .Attr("qk_norm_epsilon", "epsilon of the Q/K RMS norm", AttributeProto::FLOAT, false)
      .Input(0, "query", "[B, S, N * H], or packed QKV [B, S, (N + 2 kvN) * H]", "T")
      .Input(1, "key", "[B, S, kvN * H]", "T", OpSchema::Optional)
      .Input(2, "value", "[B, S, kvN * H]", "T", OpSchema::Optional)
      .Input(3, "past_key", "[B, kvN, P, H]", "T_CACHE", OpSchema::Optional)
      .Input(4, "past_value", "[B, kvN, P, H]", "T_CACHE", OpSchema::Optional)
      .Input(5, "seqlens_k", "[B]: each entry's total length - 1", "M")
      .Input(6, "total_sequence_length", "the longest total length", "M")
      .Input(7, "cos_cache", "[max_position, rotary_dim / 2]", "T", OpSchema::Optional)
      .Input(8, "sin_cache", "[max_position, rotary_dim / 2]", "T", OpSchema::Optional)
      .Input(9, "position_ids", "[B, S]", "tensor(int64)", OpSchema::Optional)
      .Input(10, "attention_bias", "[B or 1, N or 1, S, total]", "T", OpSchema::Optional)
      .Input(11, "head_sink", "[N]", "T", OpSchema::Optional)
      .Input(12, "k_scale", "scale of a quantized key cache", "T_KV_SCALE", OpSchema::Optional)
      .Input(13, "v_scale", "scale of a quantized value cache", "T_KV_SCALE", OpSchema::Optional)
      .Input(14, "q_norm_weight", "[H]", "T", OpSchema::Optional)
      .Input(15, "k_norm_weight", "[H]", "T", OpSchema::Optional)
      .Output(0, "output", "[B, S, N * H]", "T")
      .Output(1, "present_key", "[B, kvN, max(total, P), H]", "T_CACHE")
      .Output(2, "present_value", "[B, kvN, max(total, P), H]", "T_CACHE")
      .Output(3, "output_qk", "[B, N, S, total]", "T", OpSchema::Optional)
      .TypeConstraint("T", {"tensor(float16)", "tensor(bfloat16)", "tensor(float)"}, "")
      // ORT also allows float8e4m3fn, which onnx 1.12 does not know.
      .TypeConstraint(
          "T_CACHE",
          {"tensor(float)", "tensor(float16)", "tensor(bfloat16)", "tensor(uint8)", "tensor(int8)"},
          "")
      .TypeConstraint("T_KV_SCALE", {"tensor(float)"}, "")
      .TypeConstraint("M", {"tensor(int32)"}, "")
      .TypeAndShapeInferenceFunction(InferGroupQueryAttention);
  return s;
}

onnx::OpSchema RotaryEmbedding() {
  using onnx::AttributeProto;
  using onnx::OpSchema;
  OpSchema s;
  s.SetName("RotaryEmbedding")
      .SetDomain(kMicrosoftDomain)
      .SinceVersion(1)
      .Attr("scale", "read and not used by ONNX Runtime's kernels", AttributeProto::FLOAT, false)
      .Attr("interleaved", "rotate interleaved pairs instead of halves", AttributeProto::INT, false)
      .Attr("rotary_embedding_dim", "elements of a head rotated (default all)", AttributeProto::INT,
            false)
      .Attr("num_heads", "heads (needed with rotary_embedding_dim)", AttributeProto::INT, false)
      .Attr("is_packed_batching", "ragged batch inputs", AttributeProto::INT, false)
      .Input(0, "input", "[B, S, N * H] or [B, N, S, H]", "T")
      .Input(1, "position_ids", "[B, S], or one element: the first row's position", "M")
      .Input(2, "cos_cache", "[max_position, rotary_dim / 2]", "T")
      .Input(3, "sin_cache", "[max_position, rotary_dim / 2]", "T")
      .Output(0, "output", "the input's shape", "T")
      .TypeConstraint("T", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"}, "")
      .TypeConstraint("M", {"tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction(
          [](onnx::InferenceContext& ctx) { PropagateTypeAndShape(ctx, 0, 0); });
  return s;
}

}  // namespace

void RegisterAttentionSchemas() {
  RegisterOne(GroupQueryAttention());
  RegisterOne(RotaryEmbedding());
}

}  // namespace epctx::compile::contrib
