// com.microsoft Attention: the self-attention ONNX Runtime's transformer optimizer writes for BERT-
// and GPT-2-style models (one projection [hidden, 3 hidden] for Q, K and V, a mask_index, and for
// GPT-2 a past/present of [2, B, N, T, H]). No kernel runs it: its schema carries a function body
// of ONNX operators, built per node, that the compiler expands (function_inliner.cc), so that it
// runs on the kernels a PyTorch export's attention already compiles to (the projection on a packed
// oneDNN matmul with its bias, the scores' scale, mask and softmax on MaskedSoftmax, or all of it
// on com.epctx Attention when there is no mask).
//
// The body follows ONNX Runtime 1.30's CPU kernel: scores = scale Q K^T + mask, softmax over the
// keys, times V, where the mask adds mask_filter_value (-10000 by default) where a key is padding
// (mask_index [B] end positions, [2B] end then start positions, [B, T] or [B, S, T] raw 0/1
// masks) and again where it lies in a query's future (unidirectional), so a query whose keys are
// all masked still averages them by their scores, as ORT's does. Not expanded (the node is then
// refused as an operator no kernel runs, with the reason logged): float16 inputs, unequal Q/K/V
// sizes in qkv_hidden_sizes, no bias (ORT's CPU kernel refuses that too), a 4-D (Megatron) mask,
// past_present_share_buffer, do_rotary, and an input whose rank or weights' shape the compiler
// does not know.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <onnx/defs/function.h>

#include "compile/contrib/contrib_schemas.h"
#include "compile/contrib/schema_helpers.h"
#include "util/logging.h"

namespace epctx::compile::contrib {
namespace {

enum Input { kInput, kWeights, kBias, kMask, kPast, kAttentionBias, kPastLength };

// The static dims of input `i`, or nullopt when its rank or a dim is unknown.
std::optional<std::vector<int64_t>> StaticDims(const onnx::FunctionBodyBuildContext& ctx, int i) {
  const onnx::TypeProto* t = ctx.getInputType(i);
  if (t == nullptr || !t->has_tensor_type() || !t->tensor_type().has_shape()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : t->tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return dims;
}

// The rank of input `i`, or -1 when unknown.
int RankOf(const onnx::FunctionBodyBuildContext& ctx, int i) {
  const onnx::TypeProto* t = ctx.getInputType(i);
  if (t == nullptr || !t->has_tensor_type() || !t->tensor_type().has_shape()) return -1;
  return t->tensor_type().shape().dim_size();
}

int64_t IntAttribute(const onnx::FunctionBodyBuildContext& ctx, const char* name,
                     int64_t fallback) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  return a != nullptr && a->type() == onnx::AttributeProto::INT ? a->i() : fallback;
}

float FloatAttribute(const onnx::FunctionBodyBuildContext& ctx, const char* name, float fallback) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  return a != nullptr && a->type() == onnx::AttributeProto::FLOAT ? a->f() : fallback;
}

// Why the node cannot be expanded, or empty when it can; `h` gets the Q/K/V width and `hv` V's.
std::string Refusal(const onnx::FunctionBodyBuildContext& ctx, int64_t heads, int64_t* h,
                    int64_t* hv) {
  const onnx::TypeProto* x = ctx.getInputType(kInput);
  if (x == nullptr || !x->has_tensor_type() ||
      x->tensor_type().elem_type() != onnx::TensorProto::FLOAT) {
    return "only a float32 input is expanded";
  }
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
  *h = (*w)[1] / 3;
  *hv = *h;
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

onnx::TensorProto Int64s(std::vector<int64_t> values, bool scalar) {
  onnx::TensorProto t = onnx::ToTensor(values);
  if (!scalar) t.add_dims(static_cast<int64_t>(values.size()));
  return t;
}

bool BuildAttentionBody(const onnx::FunctionBodyBuildContext& ctx, const onnx::OpSchema& schema,
                        onnx::FunctionProto& body) {
  const int64_t heads = IntAttribute(ctx, "num_heads", 0);
  int64_t h = 0, hv = 0;
  const std::string refusal = Refusal(ctx, heads, &h, &hv);
  if (!refusal.empty()) {
    Logger().warn("com.microsoft.Attention is not expanded into ONNX operators: {}", refusal);
    return false;
  }
  const bool causal = IntAttribute(ctx, "unidirectional", 0) != 0;
  const float fill = FloatAttribute(ctx, "mask_filter_value", -10000.0f);
  const float given_scale = FloatAttribute(ctx, "scale", 0.0f);
  const float scale =
      given_scale != 0.0f ? given_scale : 1.0f / std::sqrt(static_cast<float>(h / heads));

  onnx::FunctionBuilder b(body);
  b.Const("c0", Int64s({0}, true))
      .Const("c1", Int64s({1}, true))
      .Const("c2", Int64s({2}, true))
      .Const("one1", Int64s({1}, false))
      .Const("zero_f", onnx::ToTensor(0.0f))
      .Const("fill", onnx::ToTensor(fill))
      .Const("alpha", onnx::ToTensor(scale))
      .Const("split_shape", Int64s({0, 0, 3, heads, h / heads}, false))
      .Const("out_shape", Int64s({0, 0, hv}, false))
      .Const("column", Int64s({-1, 1}, false))
      .Const("row4", Int64s({0, 1, 1, -1}, false))
      .Const("minus1", Int64s({-1}, false));
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
  b.Add(R"(
      k_t = Transpose <perm = [0, 1, 3, 2]> (k)
      raw = MatMul(q, k_t)
      scaled = Mul(raw, alpha))");

  // The additive mask: fill where a key is padding, and fill again where it is in the future.
  std::string scores = "scaled";
  std::string mask;
  if (ctx.hasInput(kMask) || causal) {
    b.Add(R"(
        k_dims = Shape(k)
        total = Gather <axis = 0> (k_dims, c2)
        keys = Range(c0, total, c1))");
  }
  if (ctx.hasInput(kMask)) {
    const int rank = RankOf(ctx, kMask);
    if (rank == 1) {
      // [B] end positions, or [2B] end then start positions: appending B zeros and reading the
      // result as rows of B gives the ends in row 0 and the starts (or the zeros) in row 1.
      b.Add(R"(
          ends_and_starts = Cast <to = 7> (mask_index)
          x_dims = Shape(input)
          batch = Gather <axis = 0> (x_dims, c0)
          batch1 = Reshape(batch, one1)
          first_b = Range(c0, batch, c1)
          ends_only = Gather <axis = 0> (ends_and_starts, first_b)
          zeros_b = Sub(ends_only, ends_only)
          padded = Concat <axis = 0> (ends_and_starts, zeros_b)
          rows_shape = Concat <axis = 0> (minus1, batch1)
          rows = Reshape(padded, rows_shape)
          end = Gather <axis = 0> (rows, c0)
          start = Gather <axis = 0> (rows, c1)
          end_col = Reshape(end, column)
          start_col = Reshape(start, column)
          before_end = Less(keys, end_col)
          after_end = Not(before_end)
          before_start = Less(keys, start_col)
          pad = Or(after_end, before_start)
          pad_f = Where(pad, fill, zero_f)
          pad_mask = Reshape(pad_f, row4))");
    } else {
      b.Const("zero_i", onnx::ToTensor(static_cast<int32_t>(0)));
      b.Add(R"(
          attend = Greater(mask_index, zero_i)
          pad = Not(attend)
          pad_f = Where(pad, fill, zero_f))");
      if (rank == 2) {
        b.Add("pad_mask = Reshape(pad_f, row4)");
      } else {
        b.Const("first_dim", Int64s({0}, false)).Const("last_dims", Int64s({1, 2}, false));
        b.Add(R"(
            m_dims = Shape(mask_index)
            m_batch = Gather <axis = 0> (m_dims, first_dim)
            m_rest = Gather <axis = 0> (m_dims, last_dims)
            m_shape = Concat <axis = 0> (m_batch, one1, m_rest)
            pad_mask = Reshape(pad_f, m_shape))");
      }
    }
    mask = "pad_mask";
  }
  if (causal) {
    b.Add(R"(
        q_dims = Shape(q)
        queries = Gather <axis = 0> (q_dims, c2)
        past_rows = Sub(total, queries)
        query_rows = Range(c0, queries, c1)
        last_seen = Add(query_rows, past_rows)
        last_seen_col = Reshape(last_seen, column)
        future = Greater(keys, last_seen_col)
        causal_f = Where(future, fill, zero_f))");
    if (mask.empty()) {
      mask = "causal_f";
    } else {
      b.Add("both_masks = Add(pad_mask, causal_f)");
      mask = "both_masks";
    }
  }
  if (!mask.empty()) {
    b.Add(("masked = Add(scaled, " + mask + ")").c_str());
    scores = "masked";
  }
  if (ctx.hasInput(kAttentionBias)) {
    b.Add(("biased = Add(" + scores + ", attention_bias)").c_str());
    scores = "biased";
  }
  b.Add(("probs = Softmax <axis = 3> (" + scores + ")").c_str());
  b.Add(R"(
      context = MatMul(probs, v)
      context_t = Transpose <perm = [0, 2, 1, 3]> (context)
      output = Reshape(context_t, out_shape))");
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
