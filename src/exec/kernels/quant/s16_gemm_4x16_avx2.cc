#include "exec/kernels/quant/s16_gemm_4x16_avx2.h"

#ifdef __AVX2__

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "exec/kernels/common/parallel_for.h"

namespace epctx::exec::kernels {
namespace {

constexpr int64_t kCols = 16;  // per panel: two registers of 8 int32 lanes
constexpr int kRows = 4;       // per tile: 8 accumulators, 2 panel registers, 1 broadcast

// Pairs of k as vpmaddwd reads them: a row's (a[2t], a[2t+1]) as one int32 (low half first), a
// zero past k.
int32_t Pair(int32_t lo, int32_t hi) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint16_t>(lo)) |
                              (static_cast<uint32_t>(static_cast<uint16_t>(hi)) << 16));
}

// Columns [j0, j0 + 16) of b [k, n], pair t of k at panel[32 t ..]: (b[2t][j], b[2t+1][j]) for
// j = j0..j0+15 as int16, zeros past k and n.
void PackPanel(const int32_t* b, int64_t k, int64_t n, int64_t j0, int16_t* panel) {
  const int64_t pairs = (k + 1) / 2;
  const int64_t cols = std::min(kCols, n - j0);
  for (int64_t t = 0; t < pairs; ++t) {
    int16_t* out = panel + t * 2 * kCols;
    const int32_t* r0 = b + 2 * t * n + j0;
    const int32_t* r1 = 2 * t + 1 < k ? r0 + n : nullptr;
    int64_t j = 0;
    for (; j < cols; ++j) {
      out[2 * j] = static_cast<int16_t>(r0[j]);
      out[2 * j + 1] = r1 != nullptr ? static_cast<int16_t>(r1[j]) : int16_t{0};
    }
    for (; j < kCols; ++j) out[2 * j] = out[2 * j + 1] = 0;
  }
}

// c[r][0..cols) for the `rows` (<= kRows) rows of pairs a2 (row stride `pairs`) times one panel.
template <int kR>
void Tile(const int32_t* a2, int64_t pairs, const int16_t* panel, int32_t* c, int64_t ldc,
          int64_t cols) {
  __m256i acc[kR][2];
  for (int r = 0; r < kR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  for (int64_t t = 0; t < pairs; ++t) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + t * 32));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + t * 32 + 16));
    for (int r = 0; r < kR; ++r) {
      const __m256i a = _mm256_set1_epi32(a2[r * pairs + t]);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(a, b0));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(a, b1));
    }
  }
  for (int r = 0; r < kR; ++r) {
    int32_t* row = c + r * ldc;
    if (cols == kCols) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(row), acc[r][0]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + 8), acc[r][1]);
    } else {
      alignas(32) int32_t full[kCols];
      _mm256_store_si256(reinterpret_cast<__m256i*>(full), acc[r][0]);
      _mm256_store_si256(reinterpret_cast<__m256i*>(full + 8), acc[r][1]);
      std::memcpy(row, full, static_cast<size_t>(cols) * sizeof(int32_t));
    }
  }
}

}  // namespace

void s16_gemm_4x16_avx2(int64_t m, int64_t n, int64_t k, const int32_t* a, const int32_t* b,
                        int32_t* c, int threads) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    std::fill(c, c + m * n, 0);
    return;
  }
  const int64_t pairs = (k + 1) / 2;
  std::vector<int32_t> a2(static_cast<size_t>(m * pairs));
  for (int64_t i = 0; i < m; ++i) {
    const int32_t* row = a + i * k;
    int32_t* out = a2.data() + i * pairs;
    for (int64_t t = 0; t < k / 2; ++t) out[t] = Pair(row[2 * t], row[2 * t + 1]);
    if (k % 2 != 0) out[pairs - 1] = Pair(row[k - 1], 0);
  }
  const int64_t panels = (n + kCols - 1) / kCols;
  ParallelForRanges(threads, panels, 1, [&](int64_t first, int64_t last) {
    std::vector<int16_t> panel(static_cast<size_t>(pairs * 2 * kCols));
    for (int64_t p = first; p < last; ++p) {
      const int64_t j0 = p * kCols;
      const int64_t cols = std::min(kCols, n - j0);
      PackPanel(b, k, n, j0, panel.data());
      int64_t i = 0;
      for (; i + kRows <= m; i += kRows) {
        Tile<kRows>(a2.data() + i * pairs, pairs, panel.data(), c + i * n + j0, n, cols);
      }
      const int32_t* rest = a2.data() + i * pairs;
      switch (m - i) {
        case 3:
          Tile<3>(rest, pairs, panel.data(), c + i * n + j0, n, cols);
          break;
        case 2:
          Tile<2>(rest, pairs, panel.data(), c + i * n + j0, n, cols);
          break;
        case 1:
          Tile<1>(rest, pairs, panel.data(), c + i * n + j0, n, cols);
          break;
        default:
          break;
      }
    }
  });
}

}  // namespace epctx::exec::kernels

#endif  // __AVX2__
