#include "exec/kernels/onednn/small_batch_gemm.h"

#include <algorithm>
#include <cstring>

#include "exec/kernels/onednn/isa.h"

#if defined(__AVX2__) && defined(__FMA__)
#define EPCTX_SMALL_GEMM 1
#include <immintrin.h>
#endif

namespace epctx::exec::kernels::onednn {
namespace {

constexpr int64_t kGroupColumns = 16;  // two vectors of b's row per step
constexpr int kRowsAtOnce = 6;         // rows of a per step: 12 accumulators

int64_t PackedWidth(int64_t n) {
  return (n + kGroupColumns - 1) / kGroupColumns * kGroupColumns;
}

#if defined(EPCTX_SMALL_GEMM)

// Rows [i0, i0 + kRows) by the 16 columns from j0 (those below n written).
template <int kRows>
__attribute__((always_inline)) inline void Step(const StridedMatrix& a, const float* pack, float* y,
                                                int64_t y_rs, int64_t y_cs, int64_t i0, int64_t j0,
                                                int64_t k, int64_t n) {
  __m256 acc[kRows][2];
  for (auto& row : acc) row[0] = row[1] = _mm256_setzero_ps();
  const float* a0 = a.data + i0 * a.row_stride;
  const int64_t a_rs = a.row_stride, a_cs = a.col_stride;
  const float* brow = pack;  // the group's rows, one after the other
#pragma GCC unroll 4
  for (int64_t l = 0; l < k; ++l, a0 += a_cs, brow += kGroupColumns) {
    const __m256 b0 = _mm256_loadu_ps(brow), b1 = _mm256_loadu_ps(brow + 8);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m256 av = _mm256_broadcast_ss(a0 + r * a_rs);
      acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  // Through memory once, after the loop: stores of acc chosen at run time made GCC 12 keep acc
  // in memory, storing all of it at every step (a third of the speed).
  alignas(32) float tile[kRows][kGroupColumns];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    _mm256_store_ps(tile[r], acc[r][0]);
    _mm256_store_ps(tile[r] + 8, acc[r][1]);
  }
  const int64_t columns = std::min(kGroupColumns, n - j0);
  for (int r = 0; r < kRows; ++r) {
    float* out = y + (i0 + r) * y_rs + j0 * y_cs;
    if (y_cs == 1 && columns == kGroupColumns) {
      _mm256_storeu_ps(out, _mm256_load_ps(tile[r]));
      _mm256_storeu_ps(out + 8, _mm256_load_ps(tile[r] + 8));
    } else {
      for (int64_t c = 0; c < columns; ++c) out[c * y_cs] = tile[r][c];
    }
  }
}

#endif  // EPCTX_SMALL_GEMM

}  // namespace

bool SmallBatchGemmAvailable() {
#if defined(EPCTX_SMALL_GEMM)
  return PackingIsa() == format::KernelIsa::kAvx2;
#else
  return false;
#endif
}

bool IsSmallBatchProduct(int64_t m, int64_t k, int64_t n) {
  int64_t mk = 0, macs = 0;
  return m > 0 && k > 0 && n > 0 && !__builtin_mul_overflow(m, k, &mk) &&
         !__builtin_mul_overflow(mk, n, &macs) && macs <= kSmallBatchGemmMacs;
}

int64_t SmallGemmPackFloats(int64_t k, int64_t n) {
  return k * PackedWidth(n);
}

void SmallGemm(StridedMatrix a, StridedMatrix b, float* y, int64_t y_row_stride,
               int64_t y_col_stride, int64_t m, int64_t k, int64_t n, float* pack) {
#if defined(EPCTX_SMALL_GEMM)
  // b in groups of 16 columns, each group's k rows one after the other (4 KiB for k = 64, read
  // as one stream: rows of the whole width, 512 bytes apart for 128 columns, fell into a few
  // cache sets and ran at a third of the speed), the last group padded with zeros.
  for (int64_t j0 = 0; j0 < n; j0 += kGroupColumns) {
    float* group = pack + j0 * k;
    const int64_t columns = std::min(kGroupColumns, n - j0);
    if (b.row_stride == 1 && b.col_stride != 1) {
      // A transposed b (attention's Kᵀ): each column's k values are contiguous; read them so.
      for (int64_t c = 0; c < kGroupColumns; ++c) {
        const float* from = b.data + (j0 + c) * b.col_stride;
        for (int64_t l = 0; l < k; ++l) group[l * kGroupColumns + c] = c < columns ? from[l] : 0.f;
      }
      continue;
    }
    for (int64_t l = 0; l < k; ++l) {
      float* row = group + l * kGroupColumns;
      const float* from = b.data + l * b.row_stride + j0 * b.col_stride;
      for (int64_t c = 0; c < columns; ++c) row[c] = from[c * b.col_stride];
      std::fill(row + columns, row + kGroupColumns, 0.f);
    }
  }
  for (int64_t j0 = 0; j0 < n; j0 += kGroupColumns) {
    const float* group = pack + j0 * k;
    int64_t i = 0;
    for (; i + kRowsAtOnce <= m; i += kRowsAtOnce) {
      Step<kRowsAtOnce>(a, group, y, y_row_stride, y_col_stride, i, j0, k, n);
    }
    for (; i < m; ++i) Step<1>(a, group, y, y_row_stride, y_col_stride, i, j0, k, n);
  }
#else
  (void)a, (void)b, (void)y, (void)y_row_stride, (void)y_col_stride, (void)m, (void)k, (void)n,
      (void)pack;
#endif
}

}  // namespace epctx::exec::kernels::onednn
