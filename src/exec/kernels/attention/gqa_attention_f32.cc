#include "exec/kernels/attention/gqa_attention_f32.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "exec/kernels/attention/attention_f32.h"
#include "exec/kernels/attention/rotary_f32.h"
#include "exec/kernels/common/eigen.h"
#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/scratch.h"
#include "exec/kernels/common/threads.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {

void GqaAttentionF32::KeyRange(int64_t b, int64_t s, int64_t* lo, int64_t* hi) const {
  const int64_t total = int64_t{seqlens_k[b]} + 1;
  const int64_t limit = causal ? RowsBefore(b) + s + 1 : total;
  *hi = std::min(limit, total);
  *lo = 0;
  if (window >= 0) *lo = std::max<int64_t>(0, (window_from_position ? limit : *hi) - window);
  *lo = std::min(*lo, *hi);
}

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Cache rows per block of a decode step: a KV head's block of keys and values (128 KiB at head
// size 64) is copied from the past and read back while it is in the core's cache.
constexpr int64_t kDecodeBlockRows = 256;
// Blocks split further for threads are kept at least this long.
constexpr int64_t kMinDecodeBlockRows = 32;
// A step that reads or copies fewer cache elements than this (or a prompt with fewer
// multiply-adds) stays on one thread: waking the others costs more.
constexpr int64_t kMinParallelDecode = int64_t{1} << 17;
constexpr int64_t kMinParallelPromptMacs = int64_t{1} << 18;

// Copies n floats, the whole 64-byte lines of dst with stores that bypass the caches (the
// ends with memcpy). A decode step copies a past of tens of MB into the present caches and reads
// it from the past: ordinary stores would first read every present line from memory and push
// the past out of the cache.
void CopyPastStreaming(float* dst, const float* src, int64_t n) {
#if defined(__AVX__)
#if defined(__AVX512F__)
  constexpr int64_t kLanes = 16;
#else
  constexpr int64_t kLanes = 8;
#endif
  const int64_t misaligned = static_cast<int64_t>(reinterpret_cast<uintptr_t>(dst) % 64);
  int64_t head = misaligned == 0 ? 0 : (64 - misaligned) / static_cast<int64_t>(sizeof(float));
  if (misaligned % sizeof(float) != 0 || head >= n) head = n;  // nothing to stream
  std::memcpy(dst, src, static_cast<size_t>(head) * sizeof(float));
  int64_t i = head;
  for (; i + kLanes <= n; i += kLanes) {
#if defined(__AVX512F__)
    _mm512_stream_ps(dst + i, _mm512_loadu_ps(src + i));
#else
    _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
#endif
  }
  std::memcpy(dst + i, src + i, static_cast<size_t>(n - i) * sizeof(float));
  _mm_sfence();  // the streamed lines are visible before the step's results are
#else
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
#endif
}

// Up to kMaxQueryGroup query rows of one KV head that are computed together.
struct QuerySet {
  int count = 0;
  int64_t s[kMaxQueryGroup] = {};
  int64_t n[kMaxQueryGroup] = {};
};

// Softmax state of one query row over some keys: the largest score m and the sum l of
// exp(score - m), the weights its unnormalized output was accumulated with.
struct Partial {
  float m = kNegInf;
  float l = 0.0f;
};

class Attention {
 public:
  Attention(const GqaAttentionF32& p, int threads) : p_(p), threads_(threads) {
    group_ = p.heads / p.kv_heads;
    // Query sets: the heads of a group for one row, sized evenly (4 heads: 2 + 2, not 3 + 1),
    // or rows of one head when a group is a single head.
    const int64_t sets = (group_ + kMaxQueryGroup - 1) / kMaxQueryGroup;
    set_size_ =
        group_ == 1 && p.seq > 1 ? kMaxQueryGroup : static_cast<int>((group_ + sets - 1) / sets);
    ld_ = (p.cache_rows + 7) / 8 * 8;
  }

  Status Run();

 private:
  Status RunRows(int64_t b, int64_t kvh, int64_t s0, int64_t s1);
  Status RunDecode(int nt);
  Status RunPrompt(int nt);
  Status RunBlock(int64_t b, int64_t kvh, int64_t block, int64_t blocks, float* partials);
  // Cache rows [*r0, *r1) of `block` of entry b in a decode step: the rows before the entry's
  // new row in blocks - 1 even parts, and the rows from it on in the last block.
  void DecodeBlockRows(int64_t b, int64_t block, int64_t blocks, int64_t* r0, int64_t* r1) const;
  void MergeBlocks(int64_t blocks, const float* partials);

  // Scores of the set's rows over keys [lo, hi), their softmax and weighted sum: written to
  // out[i] scaled to probabilities (partial == null), or left unnormalized with their softmax
  // state in partial[i]. keys and values: row 0 of the KV head's cache (the present's, or the
  // past's for rows the step copies from it).
  Status Attend(int64_t b, const QuerySet& set, const int64_t* lo, const int64_t* hi,
                const float* keys, const float* values, float* const* out, Partial* partial);
  // Row 0 of the present caches of (b, kvh).
  int64_t UnitOffset(int64_t b, int64_t kvh) const {
    return (b * p_.kv_heads + kvh) * p_.cache_rows * p_.head_size;
  }

  const float* QueryRow(int64_t b, int64_t s, int64_t n) const {
    if (p_.query_head_stride != 0) {
      return p_.query + b * p_.query_batch_stride + s * p_.query_token_stride +
             n * p_.query_head_stride;
    }
    return p_.query + (b * p_.seq + s) * p_.query_token_stride + n * p_.head_size;
  }
  float* OutputRow(int64_t b, int64_t s, int64_t n) const {
    if (p_.output_heads_first) return p_.output + ((b * p_.heads + n) * p_.seq + s) * p_.head_size;
    return p_.output + ((b * p_.seq + s) * p_.heads + n) * p_.head_size;
  }

  const GqaAttentionF32& p_;
  const int threads_;
  int64_t group_ = 1;
  int set_size_ = 1;
  int64_t ld_ = 0;
};

Status Attention::Attend(int64_t b, const QuerySet& set, const int64_t* lo, const int64_t* hi,
                         const float* keys, const float* values, float* const* out,
                         Partial* partial) {
  const int64_t h = p_.head_size;
  // The keys any row of the set sees: [first, last).
  int64_t first = std::numeric_limits<int64_t>::max(), last = 0;
  for (int i = 0; i < set.count; ++i) {
    if (lo[i] < hi[i]) {
      first = std::min(first, lo[i]);
      last = std::max(last, hi[i]);
    }
  }
  if (first >= last) {  // every row of the set sees no key
    for (int i = 0; i < set.count; ++i) {
      if (partial != nullptr) partial[i] = Partial{};
      std::fill(out[i], out[i] + h, 0.0f);
    }
    return Status::Ok();
  }
  const int64_t count = last - first;
  EPCTX_ASSIGN_OR_RETURN(float* scratch,
                         ThreadScratchF32(static_cast<size_t>(kMaxQueryGroup * (ld_ + h))));
  float* scores = scratch;
  float* rotated = scratch + kMaxQueryGroup * ld_;
  const float* q[kMaxQueryGroup];
  for (int i = 0; i < set.count; ++i) {
    q[i] = QueryRow(b, set.s[i], set.n[i]);
    if (p_.rotary_dim > 0) {
      const int64_t pos = p_.Position(b, set.s[i]);
      const int64_t half = p_.rotary_dim / 2;
      RotaryRowF32(q[i], p_.cos + pos * half, p_.sin + pos * half, p_.rotary_dim, h,
                   p_.rotary_interleaved, rotated + i * h);
      q[i] = rotated + i * h;
    }
  }
  AttentionScoresF32(q, set.count, keys + first * h, count, h, p_.scale, scores, ld_);

  float factor[kMaxQueryGroup];
  for (int i = 0; i < set.count; ++i) {
    float* row = scores + i * ld_;
    const int64_t a = lo[i] - first;
    const int64_t e = hi[i] - first;
    if (a >= e) {  // this row sees no key: zero weights, zero output
      std::fill(row, row + count, 0.0f);
      factor[i] = 0.0f;
      if (partial != nullptr) partial[i] = Partial{};
      continue;
    }
    std::fill(row, row + a, 0.0f);
    std::fill(row + e, row + count, 0.0f);
    ArrayMapF w(row + a, e - a);
    if (p_.softcap > 0.0f) w = (w * (1.0f / p_.softcap)).tanh() * p_.softcap;
    if (p_.bias != nullptr) {
      const int64_t bb = p_.bias_batches == 1 ? 0 : b;
      const int64_t bn = p_.bias_heads == 1 ? 0 : set.n[i];
      const float* bias_row =
          p_.bias + ((bb * p_.bias_heads + bn) * p_.seq + set.s[i]) * p_.bias_row;
      w += ConstArrayMapF(bias_row + lo[i], e - a);
    }
    const float m = w.maxCoeff();
    w = (w - m).exp();
    const float l = w.sum();
    if (partial != nullptr) {
      partial[i] = Partial{m, l};
      factor[i] = 1.0f;
    } else if (p_.smooth_softmax || p_.head_sink != nullptr) {
      const float sink = p_.head_sink != nullptr ? p_.head_sink[set.n[i]] : 0.0f;
      const float top = std::max(m, sink);
      const float keep = std::exp(m - top);
      factor[i] = keep / (keep * l + std::exp(sink - top));
    } else {
      factor[i] = 1.0f / l;
    }
  }
  AttentionWeightedSumF32(scores, ld_, set.count, values + first * h, count, h, factor, out);
  return Status::Ok();
}

Status Attention::RunRows(int64_t b, int64_t kvh, int64_t s0, int64_t s1) {
  // (row, head) pairs of the rows [s0, s1) and the KV head's query heads, row by row, taken
  // set_size_ at a time.
  const int64_t total = (s1 - s0) * group_;
  for (int64_t k = 0; k < total; k += set_size_) {
    QuerySet set;
    int64_t lo[kMaxQueryGroup], hi[kMaxQueryGroup];
    float* out[kMaxQueryGroup];
    for (int64_t j = k; j < std::min(total, k + set_size_); ++j) {
      const int i = set.count++;
      set.s[i] = s0 + j / group_;
      set.n[i] = kvh * group_ + j % group_;
      p_.KeyRange(b, set.s[i], &lo[i], &hi[i]);
      out[i] = OutputRow(b, set.s[i], set.n[i]);
    }
    EPCTX_RETURN_IF_ERROR(Attend(b, set, lo, hi, p_.keys + UnitOffset(b, kvh),
                                 p_.values + UnitOffset(b, kvh), out, nullptr));
  }
  return Status::Ok();
}

Status Attention::RunBlock(int64_t b, int64_t kvh, int64_t block, int64_t blocks, float* partials) {
  // Cache rows [r0, r1) of (b, kvh): assembled first (when asked), then attended to by the KV
  // head's query heads, each keeping its softmax state and unnormalized output in partials
  // [batch, heads, blocks, 2 + head_size].
  const int64_t h = p_.head_size;
  int64_t r0 = 0, r1 = 0;
  DecodeBlockRows(b, block, blocks, &r0, &r1);
  const float* keys = p_.keys + UnitOffset(b, kvh);
  const float* values = p_.values + UnitOffset(b, kvh);
  if (p_.assemble_caches) {
    const int64_t before = p_.RowsBefore(b);
    const int64_t after = before + p_.seq;
    const int64_t unit = b * p_.kv_heads + kvh;
    float* k = p_.keys + UnitOffset(b, kvh);
    float* v = p_.values + UnitOffset(b, kvh);
    const float* past_k = p_.past_keys + unit * p_.past_rows * h;
    const float* past_v = p_.past_values + unit * p_.past_rows * h;
    if (r1 <= before) {
      // A block of the past (DecodeBlockRows gives the new rows a block of their own): streamed
      // into the present, and attended to from the past.
      CopyPastStreaming(k + r0 * h, past_k + r0 * h, (r1 - r0) * h);
      CopyPastStreaming(v + r0 * h, past_v + r0 * h, (r1 - r0) * h);
      keys = past_k;
      values = past_v;
    }
    const int64_t zero_from = std::max(r0, after);
    if (zero_from < r1) {
      const size_t bytes = static_cast<size_t>((r1 - zero_from) * h) * sizeof(float);
      std::memset(k + zero_from * h, 0, bytes);
      std::memset(v + zero_from * h, 0, bytes);
    }
  }
  int64_t lo = 0, hi = 0;
  p_.KeyRange(b, 0, &lo, &hi);
  lo = std::max(lo, r0);
  hi = std::max(lo, std::min(hi, r1));
  const int64_t stride = 2 + h;
  for (int64_t k = 0; k < group_; k += set_size_) {
    QuerySet set;
    int64_t los[kMaxQueryGroup], his[kMaxQueryGroup];
    float* out[kMaxQueryGroup];
    Partial state[kMaxQueryGroup];
    for (int64_t j = k; j < std::min(group_, k + set_size_); ++j) {
      const int i = set.count++;
      set.n[i] = kvh * group_ + j;
      los[i] = lo;
      his[i] = hi;
      out[i] = partials + ((b * p_.heads + set.n[i]) * blocks + block) * stride + 2;
    }
    EPCTX_RETURN_IF_ERROR(Attend(b, set, los, his, keys, values, out, state));
    for (int i = 0; i < set.count; ++i) {
      out[i][-2] = state[i].m;
      out[i][-1] = state[i].l;
    }
  }
  return Status::Ok();
}

void Attention::MergeBlocks(int64_t chunks, const float* partials) {
  const int64_t h = p_.head_size;
  const int64_t stride = 2 + h;
  for (int64_t b = 0; b < p_.batch; ++b) {
    for (int64_t n = 0; n < p_.heads; ++n) {
      const float* part = partials + (b * p_.heads + n) * chunks * stride;
      float top = kNegInf;
      for (int64_t c = 0; c < chunks; ++c) top = std::max(top, part[c * stride]);
      const bool sink = p_.smooth_softmax || p_.head_sink != nullptr;
      const float sink_score = p_.head_sink != nullptr ? p_.head_sink[n] : 0.0f;
      if (sink) top = std::max(top, sink_score);
      ArrayMapF o(OutputRow(b, 0, n), h);
      o.setZero();
      if (top == kNegInf) continue;  // no key and no sink
      float l = sink ? std::exp(sink_score - top) : 0.0f;
      for (int64_t c = 0; c < chunks; ++c) {
        const float* pc = part + c * stride;
        if (pc[1] == 0.0f) continue;
        const float w = std::exp(pc[0] - top);
        l += w * pc[1];
        o += w * ConstArrayMapF(pc + 2, h);
      }
      if (l > 0.0f) o *= 1.0f / l;
    }
  }
}

// Runs fn(unit) for units [0, count) on nt threads, returning the first error.
template <typename Fn>
Status ParallelUnits(int nt, int64_t count, Fn&& fn) {
  Status status = Status::Ok();
  std::atomic<bool> failed{false};
  ParallelFor(nt, count, [&](int64_t u, int) {
    if (failed.load(std::memory_order_relaxed)) return;
    Status s = fn(u);
    if (!s.ok() && !failed.exchange(true)) status = std::move(s);
  });
  return status;
}

void Attention::DecodeBlockRows(int64_t b, int64_t block, int64_t blocks, int64_t* r0,
                                int64_t* r1) const {
  const int64_t before = std::clamp<int64_t>(p_.RowsBefore(b), 0, p_.cache_rows);
  const int64_t past_blocks = blocks - 1;
  if (block == past_blocks) {
    *r0 = before;
    *r1 = p_.cache_rows;
    return;
  }
  *r0 = before * block / past_blocks;
  *r1 = before * (block + 1) / past_blocks;
}

Status Attention::RunDecode(int nt) {
  // Blocks of the rows before each entry's new row, per (batch, KV head), more of them when that
  // is too few units for the threads to share evenly, and one block for the rows from the new
  // one on (DecodeBlockRows). When the step copies the past into the present, no block then
  // mixes the two: a mixed block was copied with ordinary stores and attended to in the present,
  // half the past at a past of 256 (8% of the SmolLM-shaped int4 step's samples in memcpy). The
  // split is the same whether the caches are assembled or complete (a present that is the past's
  // buffer), so both give the same bits.
  const int64_t units = p_.batch * p_.kv_heads;
  int64_t past_rows = 0;
  for (int64_t b = 0; b < p_.batch; ++b) past_rows = std::max(past_rows, p_.RowsBefore(b));
  past_rows = std::clamp<int64_t>(past_rows, 0, p_.cache_rows);
  int64_t past_blocks = std::max<int64_t>(1, (past_rows + kDecodeBlockRows - 1) / kDecodeBlockRows);
  while (nt > 1 && units * past_blocks < 2 * nt &&
         past_rows / (2 * past_blocks) >= kMinDecodeBlockRows) {
    past_blocks *= 2;
  }
  const int64_t blocks = past_blocks + 1;
  // The calling thread's buffer, reached by the others through `part` (a thread_local named
  // inside the loop would be each thread's own).
  thread_local std::vector<float> partials;
  partials.resize(static_cast<size_t>(p_.batch * p_.heads * blocks * (2 + p_.head_size)));
  float* part = partials.data();
  EPCTX_RETURN_IF_ERROR(ParallelUnits(nt, units * blocks, [&](int64_t u) {
    const int64_t bk = u / blocks;
    return RunBlock(bk / p_.kv_heads, bk % p_.kv_heads, u % blocks, blocks, part);
  }));
  MergeBlocks(blocks, part);
  return Status::Ok();
}

Status Attention::RunPrompt(int nt) {
  // Rows in blocks: enough units for the threads to balance (later rows of a causal prompt cost
  // more, so the blocks are handed out last rows first).
  const int64_t units = p_.batch * p_.kv_heads;
  int64_t block = p_.seq;
  if (nt > 1) block = std::clamp<int64_t>(p_.seq * units / (8 * nt), 1, 32);
  const int64_t blocks = (p_.seq + block - 1) / block;
  return ParallelUnits(nt, units * blocks, [&](int64_t u) {
    const int64_t blk = blocks - 1 - u / units;
    const int64_t bk = u % units;
    const int64_t s0 = blk * block;
    return RunRows(bk / p_.kv_heads, bk % p_.kv_heads, s0, std::min(p_.seq, s0 + block));
  });
}

Status Attention::Run() {
  if (p_.seq == 1) {
    const int64_t elements = p_.batch * p_.kv_heads * p_.cache_rows * p_.head_size;
    return RunDecode(ThreadsFor(threads_, elements, kMinParallelDecode));
  }
  int64_t max_keys = 0;
  for (int64_t b = 0; b < p_.batch; ++b) {
    max_keys = std::max<int64_t>(max_keys, int64_t{p_.seqlens_k[b]} + 1);
  }
  const int64_t macs = p_.batch * p_.heads * p_.seq * max_keys * p_.head_size;
  return RunPrompt(ThreadsFor(threads_, macs, kMinParallelPromptMacs));
}

}  // namespace

Status RunGqaAttentionF32(const GqaAttentionF32& p, int threads) {
  Attention attention(p, threads);
  return attention.Run();
}

}  // namespace epctx::exec::kernels
