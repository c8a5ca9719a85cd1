#include "exec/kernels/onednn/blocked_gemv.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "exec/kernels/common/weight_stream.h"
#include "exec/kernels/elementwise/element_types.h"
#include "exec/kernels/onednn/dnnl.h"
#include "exec/kernels/onednn/panel_matmul.h"
#include "exec/kernels/onednn/weight_format.h"
#include "util/cpu_features.h"

#if defined(__AVX512F__)
// GCC 12 warns that _mm512_reduce_add_ps's and the casts' undefined halves "may be used
// uninitialized" where they are inlined.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#elif defined(__AVX2__) && defined(__F16C__) && defined(__FMA__)
// Without AVX-512: the float16 blocked layout, which the compiler stores a float16 model's
// weights in, and float32 weights as oneDNN packs them there, plain [K, N] rows.
#define EPCTX_GEMV_AVX2 1
#include <immintrin.h>
#endif

#if defined(__AVX2__) && defined(__FMA__)
// Float32 weights in the 1x1 convolution's 8-column panels (panel_matmul.h), on both builds: an
// AVX-512 build packs them for `--target avx2`.
#define EPCTX_GEMV_PANELS 1
#endif

namespace epctx::exec::kernels::onednn {
namespace {

constexpr int64_t kColumns = 64;   // columns of a block
constexpr int64_t kRows = 16;      // rows of a float32 block (K is padded to a multiple)
constexpr int64_t kBf16Rows = 32;  // rows of a bfloat16 block: 16 pairs

int64_t RoundUp(int64_t v, int64_t to) {
  return (v + to - 1) / to * to;
}

#if defined(__AVX512F__)

// The `lines` cache lines of a block's row (64 columns: 256 bytes in the float32 and bfloat16
// layouts, 128 in float16's), as far ahead as weight_stream.h says.
template <int lines = 4>
__attribute__((always_inline)) inline void PrefetchRow(const void* row) {
  const char* ahead = static_cast<const char*>(row) + kStreamPrefetchBytes;
  for (int line = 0; line < lines; ++line) PrefetchStream(ahead + 64 * line);
}

// Stores the 64 sums of a block's columns from c0, those below n.
__attribute__((always_inline)) inline void StoreColumns(const __m512 (&acc)[4], int64_t c0,
                                                        int64_t n, float* y) {
  for (int j = 0; j < 4; ++j) {
    const int64_t left = std::min<int64_t>(16, n - c0 - 16 * j);
    if (left <= 0) break;
    _mm512_mask_storeu_ps(y + c0 + 16 * j, static_cast<__mmask16>((1u << left) - 1), acc[j]);
  }
}

// 16 weights of a row as float32 (float16 ones widened exactly).
__attribute__((always_inline)) inline __m512 LoadWeights(const float* w) {
  return _mm512_loadu_ps(w);
}
__attribute__((always_inline)) inline __m512 LoadWeights(const uint16_t* w) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
}

// Whether the float32 pass prefetches its stream in software. On an AMD Zen 5 (family 26) its
// hardware prefetchers keep the stream ahead better alone: SmolLM-shaped float32 decode step at
// past 16, alternating processes, median p50 with / without: 19.26 / 17.12 ms (10 each) and
// 22.57 / 19.65 (6 each, a busier hour) at 1 thread, 13.46 / 12.93 and 14.54 / 13.36 at 2. On a
// Zen 4 the prefetch was what made the pass fast (prefetching two of a row's four lines instead
// of all four took 22.5-23.1 ms instead of 17.8-18.3 at 1 thread). The float16 and bfloat16
// passes, not measured without it here, keep it.
bool Float32StreamPrefetched() {
  static const bool prefetched = [] {
    const CpuIdentity cpu = DetectedCpuIdentity();
    return !(cpu.amd && cpu.family >= 26);
  }();
  return prefetched;
}

// y[c] for the columns of blocks [b0, b1) (float32 or float16 weights, float32 sums), its rows
// prefetched in software or not.
template <typename Weight, bool kPrefetch = true>
void GemvBlocks(const Weight* w, int64_t k, int64_t n, const float* x, float* y, int64_t b0,
                int64_t b1) {
  constexpr int kRowLines = kColumns * sizeof(Weight) / 64;
  const int64_t block_elements = RoundUp(k, kRows) * kColumns;
  for (int64_t b = b0; b < b1; ++b) {
    const Weight* wb = w + b * block_elements;
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                     _mm512_setzero_ps()};
    for (int64_t r = 0; r < k; ++r) {
      const Weight* row = wb + r * kColumns;  // the rows of a block follow one another
      if constexpr (kPrefetch) PrefetchRow<kRowLines>(row);
      const __m512 xr = _mm512_set1_ps(x[r]);
      for (int j = 0; j < 4; ++j) {
        acc[j] = _mm512_fmadd_ps(xr, LoadWeights(row + 16 * j), acc[j]);
      }
    }
    StoreColumns(acc, b * kColumns, n, y);
  }
}

#endif  // __AVX512F__

#if defined(__AVX2__)

// Stores the first `count` (1 to 8) sums of `sums` at y.
__attribute__((always_inline)) inline void StoreFirst(__m256 sums, int64_t count, float* y) {
  if (count == 8) {
    _mm256_storeu_ps(y, sums);
    return;
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sums);
  std::memcpy(y, lanes, static_cast<size_t>(count) * sizeof(float));
}

#endif  // __AVX2__

#if defined(EPCTX_GEMV_AVX2)

// y[c] for the columns of blocks [b0, b1) of float16 weights, widened exactly and summed in
// float32 row after row as the AVX-512 pass does: eight accumulators of 8 columns.
void GemvHalfBlocksAvx2(const uint16_t* w, int64_t k, int64_t n, const float* x, float* y,
                        int64_t b0, int64_t b1) {
  const int64_t block_elements = RoundUp(k, kRows) * kColumns;
  // The loop prefetches what it reads 4 KiB later; its first 4 KiB are asked for here, at once.
  PrefetchStreamStart(w + b0 * block_elements, w + b1 * block_elements, kStreamPrefetchBytes);
  for (int64_t b = b0; b < b1; ++b) {
    const uint16_t* wb = w + b * block_elements;
    __m256 acc[8];
    for (__m256& a : acc) a = _mm256_setzero_ps();
    for (int64_t r = 0; r < k; ++r) {
      const uint16_t* row = wb + r * kColumns;  // 128 bytes: two cache lines
      const char* ahead = reinterpret_cast<const char*>(row) + kStreamPrefetchBytes;
      PrefetchStream(ahead);
      PrefetchStream(ahead + 64);
      const __m256 xr = _mm256_set1_ps(x[r]);
      for (int j = 0; j < 8; ++j) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 8 * j));
        acc[j] = _mm256_fmadd_ps(xr, _mm256_cvtph_ps(h), acc[j]);
      }
    }
    const int64_t c0 = b * kColumns;
    for (int j = 0; j < 8; ++j) {
      const int64_t left = std::min<int64_t>(8, n - c0 - 8 * j);
      if (left <= 0) break;
      StoreFirst(acc[j], left, y + c0 + 8 * j);
    }
  }
}

// Columns of a plain weight summed at a time: their running sums (16 KiB) stay in L1 while the
// rows' segments of them stream past. A Llama MLP's rows (1536 and 3072 columns) are then read
// whole, one stream per row: with 1024 columns they were read as two streams of unequal length,
// at 14.0-15.1 GB/s on one Zen 3 core against 16.1-18.8 (median of 15 interleaved passes over
// 600 MB of weights; narrower rows read as before).
constexpr int64_t kRowsBlockColumns = 4096;

// Adds `kCount` rows' products (rows `wr`, activations `xs`) to the running sums y[cb, ce), in
// row order; prefetches the same columns of the rows at `next`.
template <int kCount>
__attribute__((always_inline)) inline void AddRows(const float* const (&wr)[kCount],
                                                   const float (&xs)[kCount],
                                                   const char* const (&next)[kCount], float* y,
                                                   int64_t cb, int64_t ce) {
  __m256 xr[kCount];
  for (int i = 0; i < kCount; ++i) xr[i] = _mm256_set1_ps(xs[i]);
  int64_t c = cb;
  for (; c + 16 <= ce; c += 16) {
    for (int i = 0; i < kCount; ++i) PrefetchStream(next[i] + c * 4);
    __m256 lo = _mm256_loadu_ps(y + c), hi = _mm256_loadu_ps(y + c + 8);
    for (int i = 0; i < kCount; ++i) {
      lo = _mm256_fmadd_ps(xr[i], _mm256_loadu_ps(wr[i] + c), lo);
      hi = _mm256_fmadd_ps(xr[i], _mm256_loadu_ps(wr[i] + c + 8), hi);
    }
    _mm256_storeu_ps(y + c, lo);
    _mm256_storeu_ps(y + c + 8, hi);
  }
  for (; c < ce; ++c) {
    float acc = y[c];
    for (int i = 0; i < kCount; ++i) acc = std::fma(xs[i], wr[i][c], acc);
    y[c] = acc;
  }
}

// y[c] for columns [c0, c1) of a plain row-major [k, n] float32 weight whose rows start `ld`
// floats apart, rows 8 at a time: the running sums are read and written once per 8 rows, where 4
// at a time took ~8% longer over SmolLM's [576, 1536] weights and ~4% over its [576, 576] and
// [1536, 576] ones (one Zen 3 thread, decode step at past 128, 3 alternating rounds; 2 at a time
// ~20% longer, 16 no better than 4). Each column's products are summed in row order (as the
// blocked passes sum them), so a column's sum does not depend on how the columns were split
// between threads, nor on how many rows a step takes. GemvRowHalvesAvx2 calls it on each half of
// the rows.
void GemvRowsAvx2(const float* w, int64_t k, int64_t ld, const float* x, float* y, int64_t c0,
                  int64_t c1) {
  for (int64_t cb = c0; cb < c1; cb += kRowsBlockColumns) {
    const int64_t ce = std::min(c1, cb + kRowsBlockColumns);
    const int64_t segment_bytes = (ce - cb) * 4;
    // Rows ahead that the prefetches ask for: at least kStreamPrefetchBytes of weights.
    const int64_t ahead = RoundUp((kStreamPrefetchBytes + segment_bytes - 1) / segment_bytes, 4);
    auto next = [&](int64_t row) {
      return reinterpret_cast<const char*>(w + std::min(row + ahead, k - 1) * ld);
    };
    std::fill(y + cb, y + ce, 0.f);
    int64_t r = 0;
    for (; r + 8 <= k; r += 8) {
      const float* const wr[8] = {w + r * ld,       w + (r + 1) * ld, w + (r + 2) * ld,
                                  w + (r + 3) * ld, w + (r + 4) * ld, w + (r + 5) * ld,
                                  w + (r + 6) * ld, w + (r + 7) * ld};
      const float xs[8] = {x[r],     x[r + 1], x[r + 2], x[r + 3],
                           x[r + 4], x[r + 5], x[r + 6], x[r + 7]};
      const char* const ahead_rows[8] = {next(r),     next(r + 1), next(r + 2), next(r + 3),
                                         next(r + 4), next(r + 5), next(r + 6), next(r + 7)};
      AddRows<8>(wr, xs, ahead_rows, y, cb, ce);
    }
    for (; r + 4 <= k; r += 4) {
      const float* const wr[4] = {w + r * ld, w + (r + 1) * ld, w + (r + 2) * ld, w + (r + 3) * ld};
      const float xs[4] = {x[r], x[r + 1], x[r + 2], x[r + 3]};
      const char* const ahead_rows[4] = {next(r), next(r + 1), next(r + 2), next(r + 3)};
      AddRows<4>(wr, xs, ahead_rows, y, cb, ce);
    }
    for (; r < k; ++r) {
      const float* const wr[1] = {w + r * ld};
      const float xs[1] = {x[r]};
      const char* const ahead_rows[1] = {next(r)};
      AddRows<1>(wr, xs, ahead_rows, y, cb, ce);
    }
  }
}

// The rows of a plain weight are summed as two fixed halves, each column's sum (rows of the first
// half in order) + (rows of the second in order) whatever the thread count: two threads then
// read one contiguous half each, where shares of columns read half of every row (a SmolLM-shaped
// decode step's 210 plain weights, 425 MB, on a Zen 3 host at 2 threads, interleaved runs: min
// 18.4-20.4 ms against 19.6-23.0). More threads split each half's columns. A weight below
// kOneThreadStreamBytes is never split, so it is summed whole: a small product taken row by row
// (a log-mel filter bank) pays no second pass per row.
void GemvRowHalvesAvx2(const float* w, int64_t k, int64_t n, int64_t ld, const float* x, float* y,
                       int64_t bytes, int threads) {
  const bool split_weight = bytes >= kOneThreadStreamBytes;
  const int64_t halves = split_weight && k >= 8 ? 2 : 1;
  const int64_t split = halves == 2 ? RoundUp(k / 2, 4) : k;
  thread_local std::vector<float> second_half;
  if (halves == 2) second_half.resize(static_cast<size_t>(n));
  float* sums[2] = {y, second_half.data()};
  const int64_t groups = (n + 15) / 16;  // a share's segment of a row starts on a cache line
  const int workers = split_weight ? std::max(threads, 1) : 1;
  const int64_t shares = std::clamp<int64_t>(workers / halves, 1, groups);
  ParallelFor(static_cast<int>(std::min<int64_t>(workers, halves * shares)), halves * shares,
              [&](int64_t unit, int) {
                const int64_t half = unit / shares, share = unit % shares;
                const int64_t r0 = half == 0 ? 0 : split, r1 = half == 0 ? split : k;
                const int64_t c0 = groups * share / shares * 16;
                const int64_t c1 = std::min(n, groups * (share + 1) / shares * 16);
                GemvRowsAvx2(w + r0 * ld, r1 - r0, ld, x + r0, sums[half], c0, c1);
              });
  if (halves == 2) {
    for (int64_t c = 0; c < n; ++c) y[c] += second_half[c];
  }
}

#endif  // EPCTX_GEMV_AVX2

#if defined(EPCTX_GEMV_PANELS)

// Panels summed at a time: one accumulator and one stream of weights each.
constexpr int kPanelsAtOnce = 8;
// How far ahead of each panel's reads its prefetches go: the eight streams together keep about
// kStreamPrefetchBytes in flight (1 KiB each made a SmolLM-shaped decode step slower on one Zen
// 3 thread, 35.7-38.2 against 30.0-37.0 ms; 256 bytes no different).
constexpr int64_t kPanelPrefetchBytes = kStreamPrefetchBytes / kPanelsAtOnce;

// The sums of `count` panels from `w` (each `panel` floats: [K padded to 8][8]), each summed in row
// order into its own accumulator, stored to y (`columns` of them, the last panel's may be short).
template <int kCount>
__attribute__((always_inline)) inline void SumPanels(const float* w, int64_t panel, int64_t k,
                                                     const float* x, float* y, int64_t columns) {
  __m256 acc[kCount];
  for (__m256& a : acc) a = _mm256_setzero_ps();
  int64_t r = 0;
  for (; r + 2 <= k; r += 2) {  // two rows: one cache line of each panel
    for (int i = 0; i < kCount; ++i) {
      PrefetchStream(reinterpret_cast<const char*>(w + i * panel + r * kPanelColumns) +
                     kPanelPrefetchBytes);
    }
    const __m256 x0 = _mm256_set1_ps(x[r]), x1 = _mm256_set1_ps(x[r + 1]);
    for (int i = 0; i < kCount; ++i) {
      acc[i] = _mm256_fmadd_ps(x0, _mm256_loadu_ps(w + i * panel + r * kPanelColumns), acc[i]);
    }
    for (int i = 0; i < kCount; ++i) {
      acc[i] =
          _mm256_fmadd_ps(x1, _mm256_loadu_ps(w + i * panel + (r + 1) * kPanelColumns), acc[i]);
    }
  }
  for (; r < k; ++r) {
    const __m256 xr = _mm256_set1_ps(x[r]);
    for (int i = 0; i < kCount; ++i) {
      acc[i] = _mm256_fmadd_ps(xr, _mm256_loadu_ps(w + i * panel + r * kPanelColumns), acc[i]);
    }
  }
  for (int i = 0; i < kCount; ++i) {
    StoreFirst(acc[i], std::min<int64_t>(kPanelColumns, columns - i * kPanelColumns),
               y + i * kPanelColumns);
  }
}

// y[c] for the columns of panels [p0, p1) of a [N / 8][K padded to 8][8] float32 weight. Each
// column's products are summed in row order, however the panels are split between threads.
void GemvPanels(const float* w, int64_t k, int64_t n, const float* x, float* y, int64_t p0,
                int64_t p1) {
  const int64_t panel = PaddedToPanel(k) * kPanelColumns;
  int64_t p = p0;
  for (; p + kPanelsAtOnce <= p1; p += kPanelsAtOnce) {
    SumPanels<kPanelsAtOnce>(w + p * panel, panel, k, x, y + p * kPanelColumns,
                             n - p * kPanelColumns);
  }
  for (; p < p1; ++p) {
    SumPanels<1>(w + p * panel, panel, k, x, y + p * kPanelColumns, n - p * kPanelColumns);
  }
}

#endif  // EPCTX_GEMV_PANELS

#if defined(__AVX512BF16__) && defined(__AVX512F__)

// y[c] for the columns of blocks [b0, b1) (bfloat16 weights in pairs of rows; `pairs` holds x
// rounded to bfloat16, rows 2p and 2p + 1 in one 32-bit word).
void GemvBf16(const uint16_t* w, int64_t k, int64_t n, const uint32_t* pairs, float* y, int64_t b0,
              int64_t b1) {
  const int64_t row_pairs = RoundUp(k, kBf16Rows) / 2;
  const int64_t used_pairs = (k + 1) / 2;
  for (int64_t b = b0; b < b1; ++b) {
    const uint16_t* wb = w + b * row_pairs * kColumns * 2;
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                     _mm512_setzero_ps()};
    for (int64_t p = 0; p < used_pairs; ++p) {
      const uint16_t* row = wb + p * kColumns * 2;  // 64 columns x 2 rows
      PrefetchRow(row);
      const __m512bh xr = reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(pairs[p])));
      for (int j = 0; j < 4; ++j) {
        const __m512bh wj = reinterpret_cast<__m512bh>(_mm512_loadu_si512(row + 32 * j));
        acc[j] = _mm512_dpbf16_ps(acc[j], wj, xr);
      }
    }
    StoreColumns(acc, b * kColumns, n, y);
  }
}

// x rounded to bfloat16 (to nearest even), two rows a word, the last odd row paired with zero.
std::vector<uint32_t> Bf16Pairs(const float* x, int64_t k) {
  std::vector<float> padded(static_cast<size_t>(RoundUp(k, 32)), 0.f);
  std::memcpy(padded.data(), x, static_cast<size_t>(k) * sizeof(float));
  std::vector<uint32_t> pairs(padded.size() / 2);
  for (size_t i = 0; i < padded.size(); i += 32) {
    // cvtne2ps_pbh(hi, lo): lo's 16 values in the lower half, in order.
    const __m512bh bf = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(padded.data() + i + 16),
                                            _mm512_loadu_ps(padded.data() + i));
    _mm512_storeu_si512(pairs.data() + i / 2, reinterpret_cast<__m512i>(bf));
  }
  return pairs;
}

#endif  // __AVX512BF16__

}  // namespace

GemvLayout GemvLayoutOf(std::span<const int64_t> format, int64_t k, int64_t n,
                        int64_t* row_stride) {
  if (row_stride != nullptr) *row_stride = n;
  auto desc = DecodeBlockedWeightFormat(format);
  if (!desc.ok()) return GemvLayout::kNone;
  const dnnl_memory_desc_t& md = desc->data;
  if (md.ndims != 2 || md.dims[0] != k || md.dims[1] != n || md.offset0 != 0 ||
      md.format_kind != dnnl_blocked) {
    return GemvLayout::kNone;
  }
  const dnnl_blocking_desc_t& blk = md.format_desc.blocking;
#if defined(EPCTX_GEMV_AVX2)
  // Rows may be longer than n (weight_packing.cc lengthens some against cache aliasing) when this
  // pass reads them whole: oneDNN's one-row product reads wider ones faster (SmolLM's [576,
  // 49152] lm_head, rows 16 floats longer, on one Zen 3 thread: 4.6 ms against our 6.5).
  const bool rows_read_whole = blk.strides[0] == n || n <= kRowsBlockColumns;
  if (md.data_type == dnnl_f32 && blk.inner_nblks == 0 && md.padded_dims[0] == k &&
      md.padded_dims[1] == n && blk.strides[0] >= n && rows_read_whole && blk.strides[1] == 1) {
    if (row_stride != nullptr) *row_stride = blk.strides[0];
    return GemvLayout::kFloat32Rows;
  }
#endif
#if defined(EPCTX_GEMV_PANELS)
  if (md.data_type == dnnl_f32 && PanelWeightDesc(k, n) == *desc) return GemvLayout::kFloat32Panels;
#endif
  if (md.padded_dims[1] != RoundUp(n, kColumns)) return GemvLayout::kNone;
  // Blocks of 64 columns outermost, each [K padded][64]: a row block of `rows` x 64 elements.
  auto blocked_by = [&](int64_t rows) {
    return md.padded_dims[0] == RoundUp(k, rows) && blk.strides[0] == rows * kColumns &&
           blk.strides[1] == md.padded_dims[0] * kColumns;
  };
#if defined(__AVX512F__)
  if (md.data_type == dnnl_f32 && blocked_by(kRows) && blk.inner_nblks == 2 &&
      blk.inner_blks[0] == kRows && blk.inner_blks[1] == kColumns && blk.inner_idxs[0] == 0 &&
      blk.inner_idxs[1] == 1) {
    return GemvLayout::kFloat32Blocked;
  }
#endif
#if defined(__AVX512F__) || defined(EPCTX_GEMV_AVX2)
  if (md.data_type == dnnl_f16 && blocked_by(kRows) && blk.inner_nblks == 2 &&
      blk.inner_blks[0] == kRows && blk.inner_blks[1] == kColumns && blk.inner_idxs[0] == 0 &&
      blk.inner_idxs[1] == 1) {
    return GemvLayout::kFloat16Blocked;
  }
#endif
#if defined(__AVX512BF16__) && defined(__AVX512F__)
  if (md.data_type == dnnl_bf16 && blocked_by(kBf16Rows) && blk.inner_nblks == 3 &&
      blk.inner_blks[0] == kRows && blk.inner_blks[1] == kColumns && blk.inner_blks[2] == 2 &&
      blk.inner_idxs[0] == 0 && blk.inner_idxs[1] == 1 && blk.inner_idxs[2] == 0) {
    return GemvLayout::kBf16Blocked;
  }
#endif
  return GemvLayout::kNone;
}

int64_t GemvWeightBytes(GemvLayout layout, int64_t k, int64_t n, int64_t row_stride) {
  switch (layout) {
    case GemvLayout::kFloat32Blocked:
      return RoundUp(n, kColumns) * RoundUp(k, kRows) * 4;
    case GemvLayout::kBf16Blocked:
      return RoundUp(n, kColumns) * RoundUp(k, kBf16Rows) * 2;
    case GemvLayout::kFloat16Blocked:
      return RoundUp(n, kColumns) * RoundUp(k, kRows) * 2;
    case GemvLayout::kFloat32Rows:
      return k * std::max(n, row_stride) * 4;
    case GemvLayout::kFloat32Panels:
      return PaddedToPanel(n) * PaddedToPanel(k) * 4;
    default:
      return 0;
  }
}

void BlockedGemv(GemvLayout layout, const void* w, int64_t k, int64_t n, int64_t row_stride,
                 const float* x, const float* bias, float* y, int threads) {
  const int64_t blocks = (n + kColumns - 1) / kColumns;
  const int64_t bytes = GemvWeightBytes(layout, k, n, row_stride);
  switch (layout) {
#if defined(__AVX512F__)
    case GemvLayout::kFloat32Blocked: {
      const bool prefetched = Float32StreamPrefetched();
      SplitStream(blocks, bytes, threads, [&](int64_t b0, int64_t b1) {
        if (prefetched) {
          GemvBlocks(static_cast<const float*>(w), k, n, x, y, b0, b1);
        } else {
          GemvBlocks<float, false>(static_cast<const float*>(w), k, n, x, y, b0, b1);
        }
      });
      break;
    }
    case GemvLayout::kFloat16Blocked:
      SplitStream(blocks, bytes, threads, [&](int64_t b0, int64_t b1) {
        GemvBlocks(static_cast<const uint16_t*>(w), k, n, x, y, b0, b1);
      });
      break;
#elif defined(EPCTX_GEMV_AVX2)
    case GemvLayout::kFloat16Blocked:
      SplitStream(blocks, bytes, threads, [&](int64_t b0, int64_t b1) {
        GemvHalfBlocksAvx2(static_cast<const uint16_t*>(w), k, n, x, y, b0, b1);
      });
      break;
    case GemvLayout::kFloat32Rows:
      GemvRowHalvesAvx2(static_cast<const float*>(w), k, n, row_stride, x, y, bytes, threads);
      break;
#endif
#if defined(EPCTX_GEMV_PANELS)
    case GemvLayout::kFloat32Panels:
      SplitStream(PaddedToPanel(n) / kPanelColumns, bytes, threads, [&](int64_t p0, int64_t p1) {
        GemvPanels(static_cast<const float*>(w), k, n, x, y, p0, p1);
      });
      break;
#endif
#if defined(__AVX512BF16__) && defined(__AVX512F__)
    case GemvLayout::kBf16Blocked: {
      const std::vector<uint32_t> pairs = Bf16Pairs(x, k);
      SplitStream(blocks, bytes, threads, [&](int64_t b0, int64_t b1) {
        GemvBf16(static_cast<const uint16_t*>(w), k, n, pairs.data(), y, b0, b1);
      });
      break;
    }
#endif
    default:
      return;  // GemvLayoutOf never gives a layout this build cannot read
  }
  if (bias != nullptr) {
    for (int64_t c = 0; c < n; ++c) y[c] += bias[c];
  }
}

void WidenFloat16(const uint16_t* from, int64_t count, float* to) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= count; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + i));
    _mm512_storeu_ps(to + i, _mm512_cvtph_ps(h));
  }
#elif defined(EPCTX_GEMV_AVX2)
  for (; i + 8 <= count; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i));
    _mm256_storeu_ps(to + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < count; ++i) to[i] = elementwise::HalfToFloat(elementwise::Half{from[i]});
}

}  // namespace epctx::exec::kernels::onednn
