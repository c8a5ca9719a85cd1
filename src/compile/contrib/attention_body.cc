#include "compile/contrib/attention_body.h"

namespace epctx::compile::contrib {

void AddAttentionConstants(onnx::FunctionBuilder& b) {
  b.Const("c0", Int64s({0}, true))
      .Const("c1", Int64s({1}, true))
      .Const("c2", Int64s({2}, true))
      .Const("one1", Int64s({1}, false))
      .Const("minus1", Int64s({-1}, false))
      .Const("column", Int64s({-1, 1}, false))
      .Const("row4", Int64s({0, 1, 1, -1}, false))
      .Const("zero_f", onnx::ToTensor(0.0f));
}

namespace {

// pad_mask: `fill` where a key is padding, broadcastable to [B, 1, S, T]. Needs `keys` (the key
// positions 0..T-1).
void AddPaddingMask(onnx::FunctionBuilder& b, const std::string& mask, int rank) {
  const std::string m = "mask_input = Identity(" + mask + ")";
  b.Add(m.c_str());
  if (rank == 1) {
    // [B] end positions, or [2B] end then start positions: appending B zeros and reading the
    // result as rows of B gives the ends in row 0 and the starts (or the zeros) in row 1.
    b.Add(R"(
        ends_and_starts = Cast <to = 7> (mask_input)
        q_dims_b = Shape(q)
        batch = Gather <axis = 0> (q_dims_b, c0)
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
    return;
  }
  b.Const("zero_i", onnx::ToTensor(static_cast<int32_t>(0)));
  b.Add(R"(
      attend = Greater(mask_input, zero_i)
      pad = Not(attend)
      pad_f = Where(pad, fill, zero_f))");
  if (rank == 2) {
    b.Add("pad_mask = Reshape(pad_f, row4)");
    return;
  }
  b.Const("first_dim", Int64s({0}, false)).Const("last_dims", Int64s({1, 2}, false));
  b.Add(R"(
      m_dims = Shape(mask_input)
      m_batch = Gather <axis = 0> (m_dims, first_dim)
      m_rest = Gather <axis = 0> (m_dims, last_dims)
      m_shape = Concat <axis = 0> (m_batch, one1, m_rest)
      pad_mask = Reshape(pad_f, m_shape))");
}

}  // namespace

void AddScaledAttention(onnx::FunctionBuilder& b, const ScaledAttention& a) {
  b.Const("alpha", onnx::ToTensor(a.scale))
      .Const("fill", onnx::ToTensor(a.fill))
      .Const("out_shape", Int64s({0, 0, a.output_width}, false));
  b.Add(R"(
      k_t = Transpose <perm = [0, 1, 3, 2]> (k)
      raw = MatMul(q, k_t)
      scaled = Mul(raw, alpha))");
  std::string scores = "scaled";
  std::string mask;
  if (!a.mask.empty() || a.causal) {
    b.Add(R"(
        k_dims = Shape(k)
        total = Gather <axis = 0> (k_dims, c2)
        keys = Range(c0, total, c1))");
  }
  if (!a.mask.empty()) {
    AddPaddingMask(b, a.mask, a.mask_rank);
    mask = "pad_mask";
  }
  if (a.causal) {
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
  if (!a.attention_bias.empty()) {
    b.Add(("biased = Add(" + scores + ", " + a.attention_bias + ")").c_str());
    scores = "biased";
  }
  b.Add(("probs = Softmax <axis = 3> (" + scores + ")").c_str());
  b.Add(R"(
      context = MatMul(probs, v)
      context_t = Transpose <perm = [0, 2, 1, 3]> (context))");
  b.Add((a.output + " = Reshape(context_t, out_shape)").c_str());
}

}  // namespace epctx::compile::contrib
