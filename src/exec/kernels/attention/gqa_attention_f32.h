// The attention of com.microsoft GroupQueryAttention over its present key/value caches: which
// keys each query row sees (causal, local window, the batch entry's length), scores, softcap,
// bias, softmax (with a sink term for smooth softmax and head sinks), and the weighted sum of
// values, parallel over (batch, KV head, rows or key blocks). A decode step (one row) also
// copies each entry's past rows into the present caches block by block, just before it reads
// them, so that the past is read from memory once; a prompt's caches are assembled before.
// group_query_attention.cc checks the inputs and writes the new rows; this file computes.
#pragma once

#include <cstdint>

#include "epctx/status.h"

namespace epctx::exec::kernels {

struct GqaAttentionF32 {
  int64_t batch = 0, seq = 0, heads = 0, kv_heads = 0, head_size = 0;

  // query row (b, s, n) at query + (b * seq + s) * query_token_stride + n * head_size, or, with
  // query_head_stride set (a [B, N, S, H] query), at query + b * query_batch_stride + s *
  // query_token_stride + n * query_head_stride.
  const float* query = nullptr;
  int64_t query_token_stride = 0;
  int64_t query_head_stride = 0;
  int64_t query_batch_stride = 0;
  // present caches [batch, kv_heads, cache_rows, head_size]
  float* keys = nullptr;
  float* values = nullptr;
  int64_t cache_rows = 0;
  // With assemble_caches (decode only), the rows of the present caches before an entry's new row
  // are copied from the past [batch, kv_heads, past_rows, head_size], and those after it zeroed;
  // the new rows must be written already. Without, the caches are complete.
  bool assemble_caches = false;
  const float* past_keys = nullptr;
  const float* past_values = nullptr;
  int64_t past_rows = 0;
  // output row (b, s, n) at output + (b * seq + s) * heads * head_size + n * head_size ([B, S,
  // N, H]), or with output_heads_first at output + ((b * heads + n) * seq + s) * head_size.
  float* output = nullptr;
  bool output_heads_first = false;

  // Key range of row (b, s): total length seqlens_k[b] + 1; causal rows see keys up to their own
  // position, which starts at total - seq after a past (0 in the first prompt or without one).
  const int32_t* seqlens_k = nullptr;
  bool positions_from_zero = false;
  bool causal = true;
  int64_t window = -1;  // local_window_size, -1 for none
  // The window's start from the row's own position even where that lies past the entry's
  // length (ONNX Runtime's flash path: padded rows of a short entry see nothing), instead of from
  // the entry's last key (its other path).
  bool window_from_position = false;

  float scale = 1.0f;
  float softcap = 0.0f;  // > 0: scores become softcap * tanh(score / softcap)
  // additive bias [bias_batches, bias_heads, seq, bias_row] (1 broadcasts), or null
  const float* bias = nullptr;
  int64_t bias_batches = 1, bias_heads = 1, bias_row = 0;
  // softmax denominators gain exp(sink) (head_sink[n], or 0 with smooth softmax)
  const float* head_sink = nullptr;
  bool smooth_softmax = false;

  // Rotary embedding of the query rows (rotary_dim 0: none), at the position Position(b, s).
  const float* cos = nullptr;
  const float* sin = nullptr;
  int64_t rotary_dim = 0;
  bool rotary_interleaved = false;
  const int64_t* position_ids = nullptr;  // given positions, else generated from seqlens_k
  bool first_position_only = false;       // position_ids[0] + s for every entry

  int64_t Position(int64_t b, int64_t s) const {
    if (first_position_only) return (position_ids != nullptr ? position_ids[0] : 0) + s;
    if (position_ids != nullptr) return position_ids[b * seq + s];
    return seqlens_k[b] + 1 - seq + s;
  }

  // Rows of entry b's cache before its new rows: its past (0 in the first prompt or without one).
  int64_t RowsBefore(int64_t b) const {
    return positions_from_zero ? 0 : int64_t{seqlens_k[b]} + 1 - seq;
  }

  // Keys [*lo, *hi) of row (b, s); empty (lo == hi) when the window leaves none.
  void KeyRange(int64_t b, int64_t s, int64_t* lo, int64_t* hi) const;
};

// Computes the output; `threads` as ParallelFor takes them.
Status RunGqaAttentionF32(const GqaAttentionF32& p, int threads);

}  // namespace epctx::exec::kernels
