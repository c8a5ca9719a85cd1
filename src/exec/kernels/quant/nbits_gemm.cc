// The driver of NBitsMatMul (activation quantization, block sums, the split over columns and
// threads) and the portable column products for builds without AVX2.
#include "exec/kernels/quant/nbits_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/weight_stream.h"
#include "exec/kernels/onednn/chunked_weight_gemm.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace nbits_detail {

namespace {

// One block of an activation row as int8 codes (the tail past len zero); returns the code sum
// and sets the scale. MLAS's choice: the scale is max|a| / 127, and the codes are a * (127 /
// max), rounded to nearest even (the current rounding mode), so that ORT's int8 arithmetic is
// matched.
int32_t QuantizeBlock(const float* src, int64_t len, int64_t block_size, int8_t* codes,
                      float& scale) {
#if defined(__AVX512F__) && defined(__AVX512BW__)
// GCC 12 warns that the reductions' undefined upper halves "may be used uninitialized".
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
  // The same arithmetic 16 at a time (vcvtps2dq rounds by the current mode as nearbyint does,
  // and the saturating narrowing is the clamp): the same codes bit for bit.
  if (len == block_size && block_size % 16 == 0) {
    __m512 amax16 = _mm512_setzero_ps();
    for (int64_t i = 0; i < len; i += 16) {
      // In this order a NaN is skipped, as std::max(amax, NaN) skips it.
      amax16 = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(src + i)), amax16);
    }
    const float amax = _mm512_reduce_max_ps(amax16);
    scale = amax / 127.f;
    const __m512 inverse = _mm512_set1_ps(amax != 0.f ? 127.f / amax : 0.f);
    __m512i sum16 = _mm512_setzero_si512();
    for (int64_t i = 0; i < len; i += 16) {
      const __m512i c = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(src + i), inverse));
      const __m128i narrow = _mm512_cvtsepi32_epi8(c);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + i), narrow);
      sum16 = _mm512_add_epi32(sum16, _mm512_cvtepi8_epi32(narrow));
    }
    return _mm512_reduce_add_epi32(sum16);
  }
#pragma GCC diagnostic pop
#elif defined(__AVX2__)
  // The same arithmetic 8 at a time, for CPUs without AVX-512 (prompts spent ~5% of their time
  // here): vcvtps2dq rounds as above, the saturating packs are the clamp, and a NaN's "integer
  // indefinite" packs to -128 as the scalar path gives it: the same codes bit for bit.
  if (len == block_size && block_size % 16 == 0) {
    const __m256 sign = _mm256_set1_ps(-0.f);
    __m256 amax8 = _mm256_setzero_ps();
    for (int64_t i = 0; i < len; i += 8) {
      // In this order a NaN is skipped, as std::max(amax, NaN) skips it.
      amax8 = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(src + i)), amax8);
    }
    __m128 amax4 = _mm_max_ps(_mm256_castps256_ps128(amax8), _mm256_extractf128_ps(amax8, 1));
    amax4 = _mm_max_ps(amax4, _mm_movehl_ps(amax4, amax4));
    const float amax = _mm_cvtss_f32(_mm_max_ss(amax4, _mm_movehdup_ps(amax4)));
    scale = amax / 127.f;
    const __m256 inverse = _mm256_set1_ps(amax != 0.f ? 127.f / amax : 0.f);
    __m256i sum8 = _mm256_setzero_si256();
    for (int64_t i = 0; i < len; i += 16) {
      const __m256i c0 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(src + i), inverse));
      const __m256i c1 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(src + i + 8), inverse));
      // packs works within 128-bit halves: the permute puts the 16 int16 back in order.
      const __m256i c16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(c0, c1), 0xd8);
      const __m128i narrow =
          _mm_packs_epi16(_mm256_castsi256_si128(c16), _mm256_extracti128_si256(c16, 1));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + i), narrow);
      sum8 = _mm256_add_epi32(
          sum8, _mm256_madd_epi16(_mm256_cvtepi8_epi16(narrow), _mm256_set1_epi16(1)));
    }
    __m128i sum4 = _mm_add_epi32(_mm256_castsi256_si128(sum8), _mm256_extracti128_si256(sum8, 1));
    sum4 = _mm_add_epi32(sum4, _mm_shuffle_epi32(sum4, 0x4e));
    sum4 = _mm_add_epi32(sum4, _mm_shuffle_epi32(sum4, 0xb1));
    return _mm_cvtsi128_si32(sum4);
  }
#endif
  float amax = 0;
  for (int64_t i = 0; i < len; ++i) amax = std::max(amax, std::fabs(src[i]));
  scale = amax / 127.f;
  const float inverse = amax != 0.f ? 127.f / amax : 0.f;
  int32_t sum = 0;
  for (int64_t i = 0; i < block_size; ++i) {
    int32_t c = 0;
    if (i < len) {
      // A NaN (or an infinity, which makes the inverse 0) gives -128, as vcvtps2dq's "integer
      // indefinite" saturated does above; converting it to int would be undefined.
      const float v = src[i] * inverse;
      c = std::isnan(v) ? -128 : static_cast<int32_t>(std::nearbyint(std::clamp(v, -128.f, 127.f)));
    }
    codes[i] = static_cast<int8_t>(c);
    sum += c;
  }
  return sum;
}

}  // namespace

void QuantizeRows(const NBitsGeometry& g, const float* a, int64_t begin, int64_t end,
                  const QuantizedRows& q) {
  for (int64_t r = begin; r < end; ++r) {
    const float* row = a + r * g.k;
    int8_t* codes = q.codes + r * q.row_codes;
    for (int64_t b = 0; b < g.blocks; ++b) {
      const int64_t k0 = b * g.block_size;
      const int64_t len = std::min(g.block_size, g.k - k0);
      float scale = 0;
      const int32_t sum = QuantizeBlock(row + k0, len, g.block_size, codes + k0, scale);
      q.scales[r * g.blocks + b] = scale;
      q.scaled_sums[r * g.blocks + b] = scale * static_cast<float>(sum);
      if (q.zero_lanes != nullptr) {
        int32_t* lanes = q.zero_lanes + (r * g.blocks + b) * 8;
        for (int l = 0; l < 8; ++l) lanes[l] = 0;
        for (int64_t i = 0; i < g.block_size; ++i) lanes[(i % 32) / 4] += codes[k0 + i];
        for (int l = 0; l < 8; ++l) lanes[l] *= g.implied_zero_point();
      }
    }
  }
}

RowBlockGroups GroupRowBlocks(const NBitsGeometry& g, const QuantizedRows& q, int64_t row,
                              int64_t blocks_per_group, bool implied_zero) {
  RowBlockGroups r;
  r.blocks_per_group = blocks_per_group;
  r.groups = (g.blocks + blocks_per_group - 1) / blocks_per_group;
  const int64_t group_codes = blocks_per_group * 32, group_lanes = blocks_per_group * 4;
  r.codes.assign(static_cast<size_t>(r.groups * group_codes), 0);
  r.scales.assign(static_cast<size_t>(r.groups * group_lanes), 0.f);
  r.starts.assign(static_cast<size_t>(r.groups * group_lanes), 0);
  const int8_t* qa = q.codes + row * q.row_codes;
  const float* sa = q.scales + row * g.blocks;
  for (int64_t b = 0; b < g.blocks; ++b) {
    const int64_t group = b / blocks_per_group, slot = b % blocks_per_group;
    int8_t* low = r.codes.data() + group * group_codes + slot * 16;
    int8_t* high = low + group_codes / 2;
    std::memcpy(low, qa + b * 32, 16);
    std::memcpy(high, qa + b * 32 + 16, 16);
    for (int64_t l = 0; l < 4; ++l) {
      const auto lane = static_cast<size_t>(group * group_lanes + slot * 4 + l);
      r.scales[lane] = sa[b];
      if (implied_zero) {
        int32_t sum = 0;
        for (int64_t i = 0; i < 4; ++i) sum += low[l * 4 + i] + high[l * 4 + i];
        r.starts[lane] = -8 * sum;
      }
    }
  }
  return r;
}

void RoundRowsToInt8Grid(const NBitsGeometry& g, const float* a, int64_t begin, int64_t end,
                         float* out) {
  for (int64_t r = begin; r < end; ++r) {
    const float* row = a + r * g.k;
    float* dst = out + r * g.k;
    for (int64_t k0 = 0; k0 < g.k; k0 += g.block_size) {
      const int64_t len = std::min(g.block_size, g.k - k0);
      float amax = 0;
      for (int64_t i = 0; i < len; ++i) amax = std::max(amax, std::fabs(row[k0 + i]));
      const float scale = amax / 127.f;
      const float inverse = amax != 0.f ? 127.f / amax : 0.f;
      for (int64_t i = 0; i < len; ++i) {
        const float c = std::clamp(std::nearbyint(row[k0 + i] * inverse), -128.f, 127.f);
        dst[k0 + i] = c * scale;
      }
    }
  }
}

int64_t PanelWidth(int64_t n, int threads, int64_t max_width, int64_t step) {
  const int64_t workers = std::max(threads, 1);
  int64_t best = max_width, best_load = INT64_MAX;
  for (int64_t width = max_width; width >= 2 * step; width -= step) {
    const int64_t panels = (n + width - 1) / width;
    const int64_t load = (panels + workers - 1) / workers * width;  // the busiest thread's
    if (load < best_load) best = width, best_load = load;
  }
  return best;
}

#if !defined(__AVX2__)

namespace {

// Code i of block b of column n, in the packed layout's terms.
int32_t CodeAt(const NBitsWeights& w, int64_t n, int64_t b, int64_t i) {
  const uint8_t* block = w.codes + (n * w.g.blocks + b) * w.g.block_bytes;
  if (w.g.bits == 8) return static_cast<int8_t>(block[i]);
  const int64_t group = w.g.block_size >= 32 ? 32 : 16;
  const int64_t half = group / 2;
  const int64_t start = i / group * group;
  const int64_t j = i - start;
  const uint8_t byte = block[start / 2 + (j % half)];
  return j < half ? byte & 0x0f : byte >> 4;
}

void DotColumnInt8(const NBitsWeights& w, const QuantizedRows& q, int64_t row0, int rows, int64_t n,
                   float* y, int64_t ldy) {
  const NBitsGeometry& g = w.g;
  for (int r = 0; r < rows; ++r) {
    const int64_t row = row0 + r;
    const int8_t* qa = q.codes + row * q.row_codes;
    float acc = 0, correction = 0;
    for (int64_t b = 0; b < g.blocks; ++b) {
      int32_t dot = 0;
      for (int64_t i = 0; i < g.block_size; ++i) {
        dot += CodeAt(w, n, b, i) * qa[b * g.block_size + i];
      }
      const float sb = w.scales[n * g.blocks + b];
      acc += static_cast<float>(dot) * q.scales[row * g.blocks + b] * sb;
      correction += q.scaled_sums[row * g.blocks + b] * sb * ZeroPointOf(w, n, b);
    }
    y[r * ldy] = acc - correction;
  }
}

void DotColumnFloat(const NBitsWeights& w, const float* a, int64_t lda, const float* block_sums,
                    int rows, int64_t n, float* y, int64_t ldy) {
  const NBitsGeometry& g = w.g;
  for (int r = 0; r < rows; ++r) {
    const float* row = a + r * lda;
    float acc = 0;
    for (int64_t b = 0; b < g.blocks; ++b) {
      const int64_t len = std::min(g.block_size, g.k - b * g.block_size);
      float dot = 0;
      for (int64_t i = 0; i < len; ++i) {
        dot += static_cast<float>(CodeAt(w, n, b, i)) * row[b * g.block_size + i];
      }
      const float sb = w.scales[n * g.blocks + b];
      acc += sb * (dot - ZeroPointOf(w, n, b) * block_sums[r * g.blocks + b]);
    }
    y[r * ldy] = acc;
  }
}

}  // namespace

void DotColumnsInt8(const NBitsWeights& w, const QuantizedRows& q, int64_t row0, int rows,
                    int64_t begin, int64_t end, float* y, int64_t ldy) {
  for (int64_t n = begin; n < end; ++n) DotColumnInt8(w, q, row0, rows, n, y + n, ldy);
}

void DotColumnsFloat(const NBitsWeights& w, const float* a, int64_t lda, const float* block_sums,
                     int rows, int64_t begin, int64_t end, float* y, int64_t ldy) {
  for (int64_t n = begin; n < end; ++n) {
    DotColumnFloat(w, a, lda, block_sums, rows, n, y + n, ldy);
  }
}

void DequantizeColumn(const NBitsWeights& w, int64_t n, float* out) {
  for (int64_t b = 0; b < w.g.blocks; ++b) {
    const float sb = w.scales[n * w.g.blocks + b];
    const float zero = ZeroPointOf(w, n, b);
    const int64_t len = std::min(w.g.block_size, w.g.k - b * w.g.block_size);
    for (int64_t i = 0; i < len; ++i) {
      out[b * w.g.block_size + i] = (static_cast<float>(CodeAt(w, n, b, i)) - zero) * sb;
    }
  }
}

#endif  // !defined(__AVX2__)

}  // namespace nbits_detail

namespace {

// Columns a thread takes at a time: enough work per range to amortize the hand-out, few enough
// ranges that two threads share the columns evenly.
constexpr int64_t kColumnGrain = 16;
constexpr int kRowTile = 4;

// Activation rows padded to whole blocks (the float path reads whole blocks), their block sums.
// Storage for the quantized rows of m activation rows (QuantizedRows without zero lanes).
struct QuantizedRowsBuffer {
  QuantizedRowsBuffer(const NBitsGeometry& g, int64_t m)
      : codes(static_cast<size_t>(m * g.blocks * g.block_size)),
        scales(static_cast<size_t>(m * g.blocks)),
        sums(static_cast<size_t>(m * g.blocks)) {
    rows.rows = m;
    rows.row_codes = g.blocks * g.block_size;
    rows.codes = codes.data();
    rows.scales = scales.data();
    rows.scaled_sums = sums.data();
  }
  QuantizedRowsBuffer(const QuantizedRowsBuffer&) = delete;
  QuantizedRowsBuffer& operator=(const QuantizedRowsBuffer&) = delete;

  std::vector<int8_t> codes;
  std::vector<float> scales, sums;
  nbits_detail::QuantizedRows rows;
};

struct PaddedRows {
  std::vector<float> rows;
  std::vector<float> block_sums;
  int64_t ld = 0;
};

PaddedRows PadRows(const NBitsGeometry& g, const float* a, int64_t m) {
  PaddedRows p;
  p.ld = g.blocks * g.block_size;
  p.rows.assign(static_cast<size_t>(m * p.ld), 0.f);
  p.block_sums.assign(static_cast<size_t>(m * g.blocks), 0.f);
  for (int64_t r = 0; r < m; ++r) {
    std::copy(a + r * g.k, a + (r + 1) * g.k, p.rows.begin() + r * p.ld);
    for (int64_t b = 0; b < g.blocks; ++b) {
      const int64_t k0 = b * g.block_size;
      const int64_t len = std::min(g.block_size, g.k - k0);
      float s = 0;
      for (int64_t i = 0; i < len; ++i) s += a[r * g.k + k0 + i];
      p.block_sums[static_cast<size_t>(r * g.blocks + b)] = s;
    }
  }
  return p;
}

// Column products, a few rows against each column (the decode path).
void SmallMatMul(const NBitsWeights& w, const float* a, int64_t m, float* y, bool int8_activations,
                 int threads) {
  using namespace nbits_detail;
  const NBitsGeometry& g = w.g;
  std::optional<QuantizedRowsBuffer> quantized;
  std::vector<int32_t> zero_lanes;
  PaddedRows padded;
  // The int8 kernels exist only in builds for CPUs with AVX2: `if constexpr` keeps other builds
  // from referring to them, at every optimization level.
  bool decode_step = false;
  if constexpr (kHasInt8Kernels) decode_step = Int8DecodeStepApplies(w);
  if (int8_activations) {
    quantized.emplace(g, m);
    QuantizedRows& q = quantized->rows;
    // The zero lanes serve the AVX2 column products, not the decode step's kernels.
    if (g.bits == 4 && g.block_size % 32 == 0 && w.zero_points == nullptr &&
        w.float_zero_points == nullptr && !(m == 1 && decode_step)) {
      zero_lanes.resize(static_cast<size_t>(m * g.blocks * 8));
      q.zero_lanes = zero_lanes.data();
    }
    ParallelForRanges(threads, m, 8,
                      [&](int64_t begin, int64_t end) { QuantizeRows(g, a, begin, end, q); });
  } else {
    padded = PadRows(g, a, m);
  }
  if (int8_activations && m == 1 && decode_step) {
    if constexpr (kHasInt8Kernels) Int8DecodeStep(w, quantized->rows, 0, y, threads);
    return;
  }
  if constexpr (kHasFloatOneRowAvx512) {
    if (!int8_activations && m == 1 && FloatOneRowAvx512Applies(w)) {  // a decode step
      FloatOneRowAvx512(w, padded.rows.data(), padded.block_sums.data(), y, threads);
      return;
    }
  }
  if (m == 1 && int8_activations) {
    // A decode step in integers reads its weights faster than it multiplies them (the float
    // arithmetic does not): each thread's columns are one stream, which the AVX2 products
    // prefetch ahead (a SmolLM-shaped token on a Zen 3: 12.7 -> 10.1 ms at 1 thread).
    SplitStream(g.n, g.stream_bytes(), threads, [&](int64_t begin, int64_t end) {
      DotColumnsInt8(w, quantized->rows, 0, 1, begin, end, y, g.n);
    });
    return;
  }
  ParallelForRanges(threads, g.n, kColumnGrain, [&](int64_t begin, int64_t end) {
    for (int64_t row0 = 0; row0 < m; row0 += kRowTile) {
      const int rows = static_cast<int>(std::min<int64_t>(kRowTile, m - row0));
      float* out = y + row0 * g.n;
      if (int8_activations) {
        DotColumnsInt8(w, quantized->rows, row0, rows, begin, end, out, g.n);
      } else {
        DotColumnsFloat(w, padded.rows.data() + row0 * padded.ld, padded.ld,
                        padded.block_sums.data() + row0 * g.blocks, rows, begin, end, out, g.n);
      }
    }
  });
}

}  // namespace

namespace {

// From this many rows on, the weights are dequantized a chunk of columns at a time and
// multiplied by oneDNN's float32 matmul (chunked_weight_gemm.h).
constexpr int64_t kPanelRows = 8;

Status DequantizedMatMul(const NBitsWeights& w, const float* a, int64_t m, float* y, int threads) {
  return onednn::ChunkedWeightGemm(
      m, w.g.k, w.g.n, onednn::ChunkLayout::kColumns,
      [&](int64_t first, int64_t count, int64_t stride, float* out) {
        for (int64_t c = 0; c < count; ++c) {
          nbits_detail::DequantizeColumn(w, first + c, out + c * stride);
        }
      },
      a, y, threads);
}

}  // namespace

Status NBitsMatMul(const NBitsWeights& w, const float* a, int64_t m, float* y,
                   bool int8_activations, int threads) {
  using namespace nbits_detail;
  const NBitsGeometry& g = w.g;
  if (m <= 0) return Status::Ok();
  bool int8_panels = false;  // as in SmallMatMul: no reference to panel code in other builds
  if constexpr (kHasInt8Kernels) {
    int8_panels = m >= kPanelRows && int8_activations && Int8PanelsApply(w);
  }
  if (int8_panels) {
    QuantizedRowsBuffer q(g, m);
    ParallelForRanges(threads, m, 8,
                      [&](int64_t begin, int64_t end) { QuantizeRows(g, a, begin, end, q.rows); });
    if constexpr (kHasInt8Kernels) Int8PanelMatMul(w, q.rows, m, y, threads);
  } else if (m >= kPanelRows) {
    std::vector<float> grid;
    if (int8_activations) {
      grid.resize(static_cast<size_t>(m * g.k));
      ParallelForRanges(threads, m, 8, [&](int64_t begin, int64_t end) {
        RoundRowsToInt8Grid(g, a, begin, end, grid.data());
      });
    }
    EPCTX_RETURN_IF_ERROR(DequantizedMatMul(w, int8_activations ? grid.data() : a, m, y, threads));
  } else {
    SmallMatMul(w, a, m, y, int8_activations, threads);
  }
  if (w.bias != nullptr) {
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t n = 0; n < g.n; ++n) y[r * g.n + n] += w.bias[n];
    }
  }
  return Status::Ok();
}

}  // namespace epctx::exec::kernels
