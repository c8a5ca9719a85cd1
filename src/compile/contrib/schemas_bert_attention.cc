// com.microsoft Attention: the self-attention ONNX Runtime's transformer optimizer writes for BERT-
// and GPT-2-style models (one projection [hidden, 3 hidden] for Q, K and V, a mask_index, and for
// GPT-2 a past/present of [2, B, N, T, H]), and QAttention, its form after ORT's dynamic
// quantizer (input and weight int8/uint8, scaled back by their scales). No kernel runs them:
// their schemas carry a function body of ONNX operators, built per node, that the compiler expands
// (function_inliner.cc), so that they run on the kernels a PyTorch export's attention already
// compiles to (the projection on a packed oneDNN matmul with its bias, QAttention's on the
// u8 x s8 one, the scores' scale, mask and softmax on MaskedSoftmax, or all of it on com.epctx
// Attention when there is no mask).
//
// The body follows ONNX Runtime 1.30's CPU kernel: the projection plus its bias split into Q, K
// and V of N heads, a GPT-2 past's keys and values before the new ones (and the present made of
// them), then the scaled attention with ORT's additive mask from mask_index ([B] end positions,
// [2B] end then start positions, [B, T] or [B, S, T] raw 0/1 masks), unidirectional and
// attention_bias (attention_body.h); a float16 node is expanded as float32 between Casts
// (function_inliner.cc). Not expanded (the node is then refused as an operator no kernel runs,
// with the reason logged): unequal Q/K/V sizes in qkv_hidden_sizes,
// no bias (ORT's CPU kernel refuses that too), a 4-D (Megatron) mask, past_present_share_buffer,
// do_rotary, and an input whose rank or weights' shape the compiler does not know.
#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "compile/body_refusal.h"
#include "compile/contrib/attention_body.h"
#include "compile/contrib/contrib_schemas.h"
#include "compile/contrib/integer_product_body.h"
#include "compile/contrib/schema_helpers.h"

namespace epctx::compile::contrib {
namespace {

// Where each input of Attention and of its quantized form QAttention sits (-1: it has none), and
// the names the body reads them by.
struct AttentionLayout {
  const char* op;
  bool quantized;  // QAttention: input and weight are int8/uint8, scaled back by their scales
  int input, weights, bias, mask, past, attention_bias, past_length;
  const char* weights_name;
};
constexpr AttentionLayout kAttention = {"Attention", false, 0, 1, 2, 3, 4, 5, 6, "weights"};
// QAttention(input, weight, bias, input_scale, weight_scale, mask_index, input_zero_point,
// weight_zero_point, past).
constexpr AttentionLayout kQAttention = {"QAttention", true, 0, 1, 2, 5, 8, -1, -1, "weight"};
constexpr int kInputScale = 3, kWeightScale = 4, kInputZeroPoint = 6, kWeightZeroPoint = 7;

bool Has(const onnx::FunctionBodyBuildContext& ctx, int input) {
  return input >= 0 && ctx.hasInput(input);
}

bool IsInt8OrUint8(const onnx::FunctionBodyBuildContext& ctx, int i) {
  const onnx::TypeProto* t = ctx.getInputType(i);
  if (t == nullptr || !t->has_tensor_type()) return false;
  const int type = t->tensor_type().elem_type();
  return type == onnx::TensorProto::INT8 || type == onnx::TensorProto::UINT8;
}

// Why the node cannot be expanded, or empty when it can; `width` gets the width of each of Q, K
// and V (num_heads x the head size).
std::string AttentionRefusal(const onnx::FunctionBodyBuildContext& ctx, const AttentionLayout& at,
                             int64_t heads, int64_t* width) {
  if (at.quantized) {
    if (!IsInt8OrUint8(ctx, at.input) || !IsInt8OrUint8(ctx, at.weights)) {
      return "input and weight must be int8 or uint8";
    }
    if (!IsFloat32(ctx, at.bias) || !IsFloat32(ctx, kInputScale) || !IsFloat32(ctx, kWeightScale)) {
      return "only float32 and float16 bias and scales are expanded";
    }
  } else if (!IsFloat32(ctx, at.input)) {
    return "only a float32 or float16 input is expanded";
  }
  if (RankOf(ctx, at.input) != 3) return "the input's rank is not known to be 3";
  if (heads < 1) return "num_heads must be 1 or more";
  const std::optional<std::vector<int64_t>> w = StaticDims(ctx, at.weights);
  if (!w || w->size() != 2) return "the weights' shape is not known (a 2-D initializer)";
  const onnx::AttributeProto* sizes = ctx.getAttribute("qkv_hidden_sizes");
  if (sizes != nullptr && sizes->ints_size() > 0) {
    if (sizes->ints_size() != 3 || sizes->ints(0) != sizes->ints(1) ||
        sizes->ints(1) != sizes->ints(2)) {
      return "qkv_hidden_sizes with unequal Q, K and V sizes is not supported";
    }
  }
  if (!Has(ctx, at.bias)) {
    return "an Attention without a bias is not run (ONNX Runtime 1.30's CPU kernel refuses it too)";
  }
  if ((*w)[1] % (3 * heads) != 0) {
    return "the weights' columns are not 3 x num_heads x the head size";
  }
  *width = (*w)[1] / 3;
  if (Has(ctx, at.mask)) {
    const int rank = RankOf(ctx, at.mask);
    if (rank < 1 || rank > 3) {
      return rank == 4 ? "a 4-D (Megatron) mask_index is not supported"
                       : "the mask_index's rank is not known to be 1, 2 or 3";
    }
  }
  if (Has(ctx, at.past) && RankOf(ctx, at.past) != 5) return "the past's rank is not 5";
  if (Has(ctx, at.past_length) || IntAttribute(ctx, "past_present_share_buffer", 0) != 0) {
    return "past_present_share_buffer (a past and present sharing one buffer) is not supported";
  }
  if (IntAttribute(ctx, "do_rotary", 0) != 0) return "do_rotary is not supported";
  return "";
}

bool BuildAttentionBody(const onnx::FunctionBodyBuildContext& ctx, const onnx::OpSchema& schema,
                        onnx::FunctionProto& body, const AttentionLayout& at) {
  const int64_t heads = IntAttribute(ctx, "num_heads", 0);
  int64_t width = 0;
  const std::string refusal = AttentionRefusal(ctx, at, heads, &width);
  if (!refusal.empty()) {
    RefuseBody(fmt::format("com.microsoft.{}", at.op), refusal);
    return false;
  }
  const float given_scale = FloatAttribute(ctx, "scale", 0.0f);
  const float scale =
      given_scale != 0.0f ? given_scale : 1.0f / std::sqrt(static_cast<float>(width / heads));

  onnx::FunctionBuilder b(body);
  AddAttentionConstants(b);
  b.Const("split_shape", Int64s({0, 0, 3, heads, width / heads}, false));
  // Q, K, V as [B, N, S, head], from the one projection (QAttention's an integer product scaled
  // back by the product of the scales, as DynamicQuantizeMatMul's body).
  if (at.quantized) {
    AddIntegerProduct(
        b, {"input", "weight", Has(ctx, kInputZeroPoint) ? "input_zero_point" : "",
            Has(ctx, kWeightZeroPoint) ? "weight_zero_point" : "", "input_scale", "weight_scale",
            "", "qkv_mm", ctx.getInputType(at.input)->tensor_type().elem_type()});
  } else {
    b.Add("qkv_mm = MatMul(input, weights)");
  }
  b.Add(R"(
      qkv = Add(qkv_mm, bias)
      qkv5 = Reshape(qkv, split_shape)
      q_bsnh = Gather <axis = 2> (qkv5, c0)
      k_bsnh = Gather <axis = 2> (qkv5, c1)
      v_bsnh = Gather <axis = 2> (qkv5, c2)
      q = Transpose <perm = [0, 2, 1, 3]> (q_bsnh)
      k_new = Transpose <perm = [0, 2, 1, 3]> (k_bsnh)
      v_new = Transpose <perm = [0, 2, 1, 3]> (v_bsnh))");
  // With a past [2, B, N, P, head], keys and values are the past's then the new ones.
  if (Has(ctx, at.past)) {
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
  if (Has(ctx, at.mask)) {
    a.mask = "mask_index";
    a.mask_rank = RankOf(ctx, at.mask);
  }
  if (Has(ctx, at.attention_bias)) a.attention_bias = "attention_bias";
  a.output = "output";
  a.output_width = width;
  AddScaledAttention(b, a);
  schema.BuildFunction(body);
  return true;
}

// output [B, S, V width]; present [2, B, N, P + S, head] where the dims are known; of the
// input's type (the bias's for QAttention).
void InferAttention(onnx::InferenceContext& ctx, const AttentionLayout& at) {
  const size_t typed = at.quantized ? at.bias : at.input;
  onnx::propagateElemTypeFromInputToOutput(ctx, typed, 0);
  if (ctx.getNumOutputs() > 1) onnx::propagateElemTypeFromInputToOutput(ctx, typed, 1);
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
  const size_t past = static_cast<size_t>(at.past);
  const bool has_past = ctx.getNumInputs() > past && ctx.getInputType(past) != nullptr &&
                        onnx::hasInputShape(ctx, past);
  if (x.dim(1).has_dim_value()) {
    if (!has_past) {
      total->set_dim_value(x.dim(1).dim_value());
    } else {
      const onnx::TensorShapeProto& p = onnx::getInputShape(ctx, past);
      if (p.dim_size() == 5 && p.dim(3).has_dim_value()) {
        total->set_dim_value(p.dim(3).dim_value() + x.dim(1).dim_value());
      }
    }
  }
  auto* head = present.add_dim();
  if (heads != nullptr && heads->i() > 0 && v_width >= 0) head->set_dim_value(v_width / heads->i());
  onnx::updateOutputShape(ctx, 1, present);
}

// The attributes Attention and QAttention share.
void AttentionAttributes(onnx::OpSchema& s) {
  using onnx::AttributeProto;
  s.Attr("num_heads", "attention heads", AttributeProto::INT)
      .Attr("unidirectional", "1: a query sees no later key", AttributeProto::INT,
            static_cast<int64_t>(0))
      .Attr("past_present_share_buffer", "past and present in one buffer", AttributeProto::INT,
            static_cast<int64_t>(0))
      .Attr("do_rotary", "rotary embedding inside", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("rotary_embedding_dim", "rotary width", AttributeProto::INT, onnx::OPTIONAL_VALUE)
      .Attr("mask_filter_value", "added where masked", AttributeProto::FLOAT, -10000.0f)
      .Attr("scale", "of Q K^T; 0: 1 / sqrt(head size)", AttributeProto::FLOAT,
            onnx::OPTIONAL_VALUE);
}

onnx::OpSchema Attention() {
  using onnx::AttributeProto;
  using onnx::OpSchema;
  OpSchema s;
  s.SetName("Attention").SetDomain(kMicrosoftDomain).SinceVersion(1);
  AttentionAttributes(s);
  s.Attr("qkv_hidden_sizes", "widths of Q, K and V", AttributeProto::INTS, onnx::OPTIONAL_VALUE)
      .Input(0, "input", "[B, S, input hidden]", "T")
      .Input(1, "weights", "[input hidden, 3 hidden]", "T")
      .Input(2, "bias", "[3 hidden]", "T", OpSchema::Optional)
      .Input(3, "mask_index", "[B], [2B], [B, T], [B, S, T] or [B, 1, M, M]", "M",
             OpSchema::Optional)
      .Input(4, "past", "[2, B, N, P, head]", "T", OpSchema::Optional)
      .Input(5, "attention_bias", "[B or 1, N or 1, S, T]", "T", OpSchema::Optional)
      .Input(6, "past_sequence_length", "with a shared past/present buffer", "M",
             OpSchema::Optional)
      .Output(0, "output", "[B, S, hidden]", "T")
      .Output(1, "present", "[2, B, N, P + S, head]", "T", OpSchema::Optional)
      .TypeConstraint("T", {"tensor(float)", "tensor(float16)"}, "")
      .TypeConstraint("M", {"tensor(int32)"}, "")
      .TypeAndShapeInferenceFunction(
          [](onnx::InferenceContext& ctx) { InferAttention(ctx, kAttention); })
      .SetContextDependentFunctionBodyBuilder([](const onnx::FunctionBodyBuildContext& ctx,
                                                 const onnx::OpSchema& schema,
                                                 onnx::FunctionProto& body) {
        return BuildAttentionBody(ctx, schema, body, kAttention);
      });
  return s;
}

// QAttention: Attention whose input and weight are quantized (ORT's dynamic quantizer writes it,
// the input from a DynamicQuantizeLinear).
onnx::OpSchema QAttention() {
  using onnx::OpSchema;
  OpSchema s;
  s.SetName("QAttention").SetDomain(kMicrosoftDomain).SinceVersion(1);
  AttentionAttributes(s);
  s.Input(0, "input", "[B, S, input hidden], quantized", "T1")
      .Input(1, "weight", "[input hidden, 3 hidden], quantized", "T2")
      .Input(2, "bias", "[3 hidden]", "T3")
      .Input(kInputScale, "input_scale", "one value", "T3")
      .Input(kWeightScale, "weight_scale", "one, or one per column", "T3")
      .Input(5, "mask_index", "[B], [2B], [B, T] or [B, S, T]", "T4", OpSchema::Optional)
      .Input(kInputZeroPoint, "input_zero_point", "one value", "T1", OpSchema::Optional)
      .Input(kWeightZeroPoint, "weight_zero_point", "like weight_scale", "T2", OpSchema::Optional)
      .Input(8, "past", "[2, B, N, P, head]", "T3", OpSchema::Optional)
      .Output(0, "output", "[B, S, hidden]", "T3")
      .Output(1, "present", "[2, B, N, P + S, head]", "T3", OpSchema::Optional)
      .TypeConstraint("T1", {"tensor(int8)", "tensor(uint8)"}, "")
      .TypeConstraint("T2", {"tensor(int8)", "tensor(uint8)"}, "")
      .TypeConstraint("T3", {"tensor(float)", "tensor(float16)"}, "")
      .TypeConstraint("T4", {"tensor(int32)"}, "")
      .TypeAndShapeInferenceFunction(
          [](onnx::InferenceContext& ctx) { InferAttention(ctx, kQAttention); })
      .SetContextDependentFunctionBodyBuilder([](const onnx::FunctionBodyBuildContext& ctx,
                                                 const onnx::OpSchema& schema,
                                                 onnx::FunctionProto& body) {
        return BuildAttentionBody(ctx, schema, body, kQAttention);
      });
  return s;
}

}  // namespace

void RegisterBertAttentionSchemas() {
  RegisterOne(Attention());
  RegisterOne(QAttention());
}

}  // namespace epctx::compile::contrib
