// AVX2 column products of NBitsMatMul: up to 4 activation rows against one weight column, the
// column's codes unpacked once per block and used for every row. Instantiated per row count and
// weight format so that the per-row accumulators stay in registers.
#include "exec/kernels/quant/nbits_gemm.h"

#if defined(__AVX2__)

#include <immintrin.h>

#include <algorithm>

#include "exec/kernels/common/vector_sum.h"
#include "exec/kernels/common/weight_stream.h"

namespace epctx::exec::kernels::nbits_detail {
namespace {

inline __m256i Widen(__m128i v) {
  return _mm256_set_m128i(_mm_setzero_si128(), v);
}

// The 32 codes of a 4-bit group of 32 (16 bytes: code j low, j + 16 high), as bytes in order.
inline __m256i Codes4x32(const uint8_t* p) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), _mm256_set1_epi8(0x0f));
}

// The 16 codes of a 4-bit block of 16 (8 bytes: code j low, j + 8 high), as bytes in order.
inline __m128i Codes4x16(const uint8_t* p) {
  const __m128i raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm_and_si128(_mm_unpacklo_epi64(raw, _mm_srli_epi16(raw, 4)), _mm_set1_epi8(0x0f));
}

// Sum of code * activation over 32 (unsigned 4-bit codes) as 8 int32 lanes.
inline __m256i DotU4(__m256i codes, const int8_t* qa) {
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qa));
  return _mm256_madd_epi16(_mm256_maddubs_epi16(codes, a), _mm256_set1_epi16(1));
}

// The same for signed 8-bit codes: |w| (unsigned) times a with w's sign.
inline __m256i DotS8(const uint8_t* w, const int8_t* qa) {
  const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qa));
  return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(wv), _mm256_sign_epi8(a, wv)),
                           _mm256_set1_epi16(1));
}

inline __m128i DotU4x16(__m128i codes, const int8_t* qa) {
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qa));
  return _mm_madd_epi16(_mm_maddubs_epi16(codes, a), _mm_set1_epi16(1));
}

inline __m128i DotS8x16(const uint8_t* w, const int8_t* qa) {
  const __m128i wv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w));
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qa));
  return _mm_madd_epi16(_mm_maddubs_epi16(_mm_abs_epi8(wv), _mm_sign_epi8(a, wv)),
                        _mm_set1_epi16(1));
}

template <int kRows, int kBits>
void Int8RowsGeneric(const NBitsWeights& w, const QuantizedRows& q, int64_t row0, int64_t n,
                     float* y, int64_t ldy) {
  const NBitsGeometry& g = w.g;
  const int64_t bs = g.block_size;
  const uint8_t* column = w.codes + n * g.blocks * g.block_bytes;
  const float* sb_column = w.scales + n * g.blocks;
  const int8_t* qa[kRows];
  const float* sa[kRows];
  const float* sums[kRows];
  __m256 acc[kRows];
  float correction[kRows];
  for (int r = 0; r < kRows; ++r) {
    qa[r] = q.codes + (row0 + r) * q.row_codes;
    sa[r] = q.scales + (row0 + r) * g.blocks;
    sums[r] = q.scaled_sums + (row0 + r) * g.blocks;
    acc[r] = _mm256_setzero_ps();
    correction[r] = 0;
  }
  for (int64_t b = 0; b < g.blocks; ++b) {
    const uint8_t* codes = column + b * g.block_bytes;
    const int64_t k0 = b * bs;
    __m256i isum[kRows];
    for (int r = 0; r < kRows; ++r) isum[r] = _mm256_setzero_si256();
    if (bs == 16) {
      if constexpr (kBits == 4) {
        const __m128i c = Codes4x16(codes);
        for (int r = 0; r < kRows; ++r) isum[r] = Widen(DotU4x16(c, qa[r] + k0));
      } else {
        for (int r = 0; r < kRows; ++r) isum[r] = Widen(DotS8x16(codes, qa[r] + k0));
      }
    } else {
      for (int64_t i = 0; i < bs; i += 32) {
        if constexpr (kBits == 4) {
          const __m256i c = Codes4x32(codes + i / 2);
          for (int r = 0; r < kRows; ++r) {
            isum[r] = _mm256_add_epi32(isum[r], DotU4(c, qa[r] + k0 + i));
          }
        } else {
          for (int r = 0; r < kRows; ++r) {
            isum[r] = _mm256_add_epi32(isum[r], DotS8(codes + i, qa[r] + k0 + i));
          }
        }
      }
    }
    const float sb = sb_column[b];
    const float zero = ZeroPointOf(w, n, b);
    for (int r = 0; r < kRows; ++r) {
      acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r]), _mm256_set1_ps(sa[r][b] * sb), acc[r]);
      correction[r] += sums[r][b] * sb * zero;
    }
  }
  for (int r = 0; r < kRows; ++r) y[r * ldy] = HorizontalSum(acc[r]) - correction[r];
}

enum class ZeroKind { kImplied, kBytes, kFloats };

// Blocks of 32 or more: per block, the rows' integer dot products (one 16-byte load of codes
// shared by the rows), the implied zero point taken off lane by lane (zero_lanes) or, for given
// zero points, through each row's scaled block sums; one float multiply-add per row and block.
template <int kRows, int kBits, ZeroKind kZero>
void Int8Rows(const NBitsWeights& w, const QuantizedRows& q, int64_t row0, int64_t n, float* y,
              int64_t ldy) {
  const NBitsGeometry& g = w.g;
  const int64_t bs = g.block_size;
  const uint8_t* column = w.codes + n * g.blocks * g.block_bytes;
  const float* sb_column = w.scales + n * g.blocks;
  const int8_t* qa[kRows];
  const float* sa[kRows];
  const float* sums[kRows];
  const int32_t* lanes[kRows];
  __m256 acc[kRows];
  float correction[kRows];
  for (int r = 0; r < kRows; ++r) {
    qa[r] = q.codes + (row0 + r) * q.row_codes;
    sa[r] = q.scales + (row0 + r) * g.blocks;
    sums[r] = q.scaled_sums + (row0 + r) * g.blocks;
    lanes[r] = q.zero_lanes != nullptr ? q.zero_lanes + (row0 + r) * g.blocks * 8 : nullptr;
    acc[r] = _mm256_setzero_ps();
    correction[r] = 0;
  }
  for (int64_t b = 0; b < g.blocks; ++b) {
    const uint8_t* codes = column + b * g.block_bytes;
    const int64_t k0 = b * bs;
    __m256i isum[kRows];
    if constexpr (kBits == 4) {
      const __m256i c = Codes4x32(codes);
      for (int r = 0; r < kRows; ++r) isum[r] = DotU4(c, qa[r] + k0);
      for (int64_t i = 32; i < bs; i += 32) {
        const __m256i ci = Codes4x32(codes + i / 2);
        for (int r = 0; r < kRows; ++r) {
          isum[r] = _mm256_add_epi32(isum[r], DotU4(ci, qa[r] + k0 + i));
        }
      }
    } else {
      for (int r = 0; r < kRows; ++r) isum[r] = DotS8(codes, qa[r] + k0);
      for (int64_t i = 32; i < bs; i += 32) {
        for (int r = 0; r < kRows; ++r) {
          isum[r] = _mm256_add_epi32(isum[r], DotS8(codes + i, qa[r] + k0 + i));
        }
      }
    }
    if constexpr (kBits == 4 && kZero == ZeroKind::kImplied) {
      for (int r = 0; r < kRows; ++r) {
        isum[r] = _mm256_sub_epi32(
            isum[r], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes[r] + b * 8)));
      }
    }
    const __m256 sb = _mm256_broadcast_ss(sb_column + b);
    for (int r = 0; r < kRows; ++r) {
      acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r]),
                               _mm256_mul_ps(_mm256_broadcast_ss(sa[r] + b), sb), acc[r]);
    }
    if constexpr (kZero != ZeroKind::kImplied) {
      const int64_t i = n * g.blocks + b;
      const float zero =
          kZero == ZeroKind::kBytes ? static_cast<float>(w.zero_points[i]) : w.float_zero_points[i];
      for (int r = 0; r < kRows; ++r) correction[r] += sums[r][b] * sb_column[b] * zero;
    }
  }
  for (int r = 0; r < kRows; ++r) y[r * ldy] = HorizontalSum(acc[r]) - correction[r];
}

inline __m256 Floats(__m128i bytes_u8) {
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes_u8));
}
inline __m256 FloatsS8(__m128i bytes_s8) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes_s8));
}

template <int kRows, int kBits>
void FloatRows(const NBitsWeights& w, const float* a, int64_t lda, const float* block_sums,
               int64_t n, float* y, int64_t ldy) {
  const NBitsGeometry& g = w.g;
  const int64_t bs = g.block_size;
  const uint8_t* column = w.codes + n * g.blocks * g.block_bytes;
  const float* sb_column = w.scales + n * g.blocks;
  __m256 acc[kRows];
  float correction[kRows];
  for (int r = 0; r < kRows; ++r) {
    acc[r] = _mm256_setzero_ps();
    correction[r] = 0;
  }
  const __m128i low4 = _mm_set1_epi8(0x0f);
  for (int64_t b = 0; b < g.blocks; ++b) {
    const uint8_t* codes = column + b * g.block_bytes;
    const int64_t k0 = b * bs;
    __m256 dot[kRows];
    for (int r = 0; r < kRows; ++r) dot[r] = _mm256_setzero_ps();
    // Eight codes at a time as floats, multiplied into every row's block product.
    auto eight = [&](__m256 wf, int64_t k) {
      for (int r = 0; r < kRows; ++r) {
        dot[r] = _mm256_fmadd_ps(wf, _mm256_loadu_ps(a + r * lda + k), dot[r]);
      }
    };
    if constexpr (kBits == 4) {
      if (bs == 16) {
        const __m128i raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes));
        eight(Floats(_mm_and_si128(raw, low4)), k0);
        eight(Floats(_mm_and_si128(_mm_srli_epi16(raw, 4), low4)), k0 + 8);
      } else {
        for (int64_t i = 0; i < bs; i += 32) {
          const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i / 2));
          const __m128i lo = _mm_and_si128(raw, low4);
          const __m128i hi = _mm_and_si128(_mm_srli_epi16(raw, 4), low4);
          eight(Floats(lo), k0 + i);
          eight(Floats(_mm_srli_si128(lo, 8)), k0 + i + 8);
          eight(Floats(hi), k0 + i + 16);
          eight(Floats(_mm_srli_si128(hi, 8)), k0 + i + 24);
        }
      }
    } else {
      for (int64_t i = 0; i < bs; i += 16) {
        const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i));
        eight(FloatsS8(raw), k0 + i);
        eight(FloatsS8(_mm_srli_si128(raw, 8)), k0 + i + 8);
      }
    }
    const float sb = sb_column[b];
    const float zero = ZeroPointOf(w, n, b);
    for (int r = 0; r < kRows; ++r) {
      acc[r] = _mm256_fmadd_ps(dot[r], _mm256_set1_ps(sb), acc[r]);
      correction[r] += sb * zero * block_sums[r * g.blocks + b];
    }
  }
  for (int r = 0; r < kRows; ++r) y[r * ldy] = HorizontalSum(acc[r]) - correction[r];
}

template <int kBits, ZeroKind kZero>
void Int8Dispatch(const NBitsWeights& w, const QuantizedRows& q, int64_t row0, int rows, int64_t n,
                  float* y, int64_t ldy) {
  switch (rows) {
    case 1:
      return Int8Rows<1, kBits, kZero>(w, q, row0, n, y, ldy);
    case 2:
      return Int8Rows<2, kBits, kZero>(w, q, row0, n, y, ldy);
    case 3:
      return Int8Rows<3, kBits, kZero>(w, q, row0, n, y, ldy);
    default:
      return Int8Rows<4, kBits, kZero>(w, q, row0, n, y, ldy);
  }
}

template <int kBits>
void Int8DispatchGeneric(const NBitsWeights& w, const QuantizedRows& q, int64_t row0, int rows,
                         int64_t n, float* y, int64_t ldy) {
  switch (rows) {
    case 1:
      return Int8RowsGeneric<1, kBits>(w, q, row0, n, y, ldy);
    case 2:
      return Int8RowsGeneric<2, kBits>(w, q, row0, n, y, ldy);
    case 3:
      return Int8RowsGeneric<3, kBits>(w, q, row0, n, y, ldy);
    default:
      return Int8RowsGeneric<4, kBits>(w, q, row0, n, y, ldy);
  }
}

template <int kBits>
void Int8DispatchZero(const NBitsWeights& w, const QuantizedRows& q, int64_t row0, int rows,
                      int64_t n, float* y, int64_t ldy) {
  if (w.g.block_size < 32) return Int8DispatchGeneric<kBits>(w, q, row0, rows, n, y, ldy);
  if (w.zero_points != nullptr) {
    return Int8Dispatch<kBits, ZeroKind::kBytes>(w, q, row0, rows, n, y, ldy);
  }
  if (w.float_zero_points != nullptr) {
    return Int8Dispatch<kBits, ZeroKind::kFloats>(w, q, row0, rows, n, y, ldy);
  }
  if (kBits == 4 && q.zero_lanes == nullptr) {  // the caller made no lanes: the generic path
    return Int8DispatchGeneric<kBits>(w, q, row0, rows, n, y, ldy);
  }
  return Int8Dispatch<kBits, ZeroKind::kImplied>(w, q, row0, rows, n, y, ldy);
}

template <int kBits>
void FloatDispatch(const NBitsWeights& w, const float* a, int64_t lda, const float* block_sums,
                   int rows, int64_t n, float* y, int64_t ldy) {
  switch (rows) {
    case 1:
      return FloatRows<1, kBits>(w, a, lda, block_sums, n, y, ldy);
    case 2:
      return FloatRows<2, kBits>(w, a, lda, block_sums, n, y, ldy);
    case 3:
      return FloatRows<3, kBits>(w, a, lda, block_sums, n, y, ldy);
    default:
      return FloatRows<4, kBits>(w, a, lda, block_sums, n, y, ldy);
  }
}

// One block's weights, (code - zero) * scale, to out[0, block_size).
template <int kBits>
void DequantizeBlock(const uint8_t* codes, int64_t bs, float sb, float zero, float* out) {
  const __m256 scale = _mm256_set1_ps(sb);
  const __m256 offset = _mm256_set1_ps(-zero * sb);
  auto eight = [&](__m256 f, int64_t i) {
    _mm256_storeu_ps(out + i, _mm256_fmadd_ps(f, scale, offset));
  };
  const __m128i low4 = _mm_set1_epi8(0x0f);
  if constexpr (kBits == 4) {
    if (bs == 16) {
      const __m128i raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes));
      eight(Floats(_mm_and_si128(raw, low4)), 0);
      eight(Floats(_mm_and_si128(_mm_srli_epi16(raw, 4), low4)), 8);
      return;
    }
    for (int64_t i = 0; i < bs; i += 32) {
      const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i / 2));
      const __m128i lo = _mm_and_si128(raw, low4);
      const __m128i hi = _mm_and_si128(_mm_srli_epi16(raw, 4), low4);
      eight(Floats(lo), i);
      eight(Floats(_mm_srli_si128(lo, 8)), i + 8);
      eight(Floats(hi), i + 16);
      eight(Floats(_mm_srli_si128(hi, 8)), i + 24);
    }
  } else {
    for (int64_t i = 0; i < bs; i += 16) {
      const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i));
      eight(FloatsS8(raw), i);
      eight(FloatsS8(_mm_srli_si128(raw, 8)), i + 8);
    }
  }
}

template <int kBits>
void DequantizeColumnAvx2(const NBitsWeights& w, int64_t n, float* out) {
  const NBitsGeometry& g = w.g;
  const uint8_t* column = w.codes + n * g.blocks * g.block_bytes;
  alignas(32) float tail[256];
  for (int64_t b = 0; b < g.blocks; ++b) {
    const int64_t k0 = b * g.block_size;
    const float sb = w.scales[n * g.blocks + b];
    const float zero = ZeroPointOf(w, n, b);
    if (k0 + g.block_size <= g.k) {
      DequantizeBlock<kBits>(column + b * g.block_bytes, g.block_size, sb, zero, out + k0);
    } else {  // the last block's codes past K are padding: written to a side buffer
      DequantizeBlock<kBits>(column + b * g.block_bytes, g.block_size, sb, zero, tail);
      std::copy(tail, tail + (g.k - k0), out + k0);
    }
  }
}

// Code group i (32 codes) of a block as 8 int32 lanes of code * activation, for either width.
template <int kBits>
inline __m256i GroupDot(const uint8_t* codes, int64_t i, const int8_t* qa) {
  if constexpr (kBits == 4) {
    return DotU4(Codes4x32(codes + i / 2), qa + i);
  } else {
    return DotS8(codes + i, qa + i);
  }
}

// One activation row (a decode step) against kCols columns at a time: the row's scale and zero
// lanes are loaded once per block for all of them, and the block loop runs inside (no call per
// column). kOneGroup: blocks of exactly 32 codes.
template <int kBits, ZeroKind kZero, bool kOneGroup, int kCols>
void Int8OneRowColumns(const NBitsWeights& w, const QuantizedRows& q, int64_t row, int64_t n,
                       float* y) {
  const NBitsGeometry& g = w.g;
  const int8_t* qa = q.codes + row * q.row_codes;
  const float* sa = q.scales + row * g.blocks;
  const float* sums = q.scaled_sums + row * g.blocks;
  const int32_t* lanes = q.zero_lanes != nullptr ? q.zero_lanes + row * g.blocks * 8 : nullptr;
  const int64_t column_bytes = g.blocks * g.block_bytes;
  const uint8_t* column[kCols];
  const float* sb[kCols];
  __m256 acc[kCols];
  float correction[kCols];
  for (int c = 0; c < kCols; ++c) {
    column[c] = w.codes + (n + c) * column_bytes;
    sb[c] = w.scales + (n + c) * g.blocks;
    acc[c] = _mm256_setzero_ps();
    correction[c] = 0;
  }
  // The columns' codes (and scales) lie one after the other: prefetched ahead as one stream,
  // kCols blocks of it per step.
  const char* codes_ahead = reinterpret_cast<const char*>(column[0]) + kStreamPrefetchBytes;
  const char* scales_ahead = reinterpret_cast<const char*>(sb[0]) + kStreamPrefetchBytes / 4;
  const int64_t step_bytes = kCols * g.block_bytes;
  for (int64_t b = 0; b < g.blocks; ++b) {
    for (int64_t line = 0; line < step_bytes; line += 64) {
      PrefetchStream(codes_ahead + b * step_bytes + line);
    }
    PrefetchStream(scales_ahead + b * kCols * static_cast<int64_t>(sizeof(float)));
    const __m256 sab = _mm256_broadcast_ss(sa + b);
    const int8_t* qb = qa + b * g.block_size;
    __m256i zero_lanes = _mm256_setzero_si256();
    if constexpr (kBits == 4 && kZero == ZeroKind::kImplied) {
      zero_lanes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes + b * 8));
    }
    for (int c = 0; c < kCols; ++c) {
      const uint8_t* codes = column[c] + b * g.block_bytes;
      __m256i isum = GroupDot<kBits>(codes, 0, qb);
      if constexpr (!kOneGroup) {
        for (int64_t i = 32; i < g.block_size; i += 32) {
          isum = _mm256_add_epi32(isum, GroupDot<kBits>(codes, i, qb));
        }
      }
      if constexpr (kBits == 4 && kZero == ZeroKind::kImplied) {
        isum = _mm256_sub_epi32(isum, zero_lanes);
      }
      acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum),
                               _mm256_mul_ps(sab, _mm256_broadcast_ss(sb[c] + b)), acc[c]);
      if constexpr (kZero != ZeroKind::kImplied) {
        const int64_t i = (n + c) * g.blocks + b;
        const float zero = kZero == ZeroKind::kBytes ? static_cast<float>(w.zero_points[i])
                                                     : w.float_zero_points[i];
        correction[c] += sums[b] * sb[c][b] * zero;
      }
    }
  }
  for (int c = 0; c < kCols; ++c) y[n + c] = HorizontalSum(acc[c]) - correction[c];
}

template <int kBits, ZeroKind kZero, bool kOneGroup>
void Int8OneRow(const NBitsWeights& w, const QuantizedRows& q, int64_t row, int64_t begin,
                int64_t end, float* y) {
  int64_t n = begin;
  for (; n + 4 <= end; n += 4) Int8OneRowColumns<kBits, kZero, kOneGroup, 4>(w, q, row, n, y);
  for (; n < end; ++n) Int8OneRowColumns<kBits, kZero, kOneGroup, 1>(w, q, row, n, y);
}

template <int kBits, ZeroKind kZero>
void Int8OneRowGroups(const NBitsWeights& w, const QuantizedRows& q, int64_t row, int64_t begin,
                      int64_t end, float* y) {
  if (w.g.block_size == 32) return Int8OneRow<kBits, kZero, true>(w, q, row, begin, end, y);
  return Int8OneRow<kBits, kZero, false>(w, q, row, begin, end, y);
}

// The same for the float arithmetic: the row's block of activations is loaded once for the
// columns, each column's codes converted to floats once.
template <int kBits, int kCols>
void FloatOneRowColumns(const NBitsWeights& w, const float* a, const float* block_sums, int64_t n,
                        float* y) {
  const NBitsGeometry& g = w.g;
  const int64_t column_bytes = g.blocks * g.block_bytes;
  const __m128i low4 = _mm_set1_epi8(0x0f);
  __m256 acc[kCols];
  float correction[kCols];
  for (int c = 0; c < kCols; ++c) {
    acc[c] = _mm256_setzero_ps();
    correction[c] = 0;
  }
  for (int64_t b = 0; b < g.blocks; ++b) {
    const float* ab = a + b * g.block_size;
    for (int c = 0; c < kCols; ++c) {
      const uint8_t* codes = w.codes + (n + c) * column_bytes + b * g.block_bytes;
      __m256 dot = _mm256_setzero_ps();
      if constexpr (kBits == 4) {
        for (int64_t i = 0; i < g.block_size; i += 32) {
          if (g.block_size == 16) {
            const __m128i raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes));
            dot = _mm256_fmadd_ps(Floats(_mm_and_si128(raw, low4)), _mm256_loadu_ps(ab), dot);
            dot = _mm256_fmadd_ps(Floats(_mm_and_si128(_mm_srli_epi16(raw, 4), low4)),
                                  _mm256_loadu_ps(ab + 8), dot);
            break;
          }
          const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i / 2));
          const __m128i lo = _mm_and_si128(raw, low4);
          const __m128i hi = _mm_and_si128(_mm_srli_epi16(raw, 4), low4);
          dot = _mm256_fmadd_ps(Floats(lo), _mm256_loadu_ps(ab + i), dot);
          dot = _mm256_fmadd_ps(Floats(_mm_srli_si128(lo, 8)), _mm256_loadu_ps(ab + i + 8), dot);
          dot = _mm256_fmadd_ps(Floats(hi), _mm256_loadu_ps(ab + i + 16), dot);
          dot = _mm256_fmadd_ps(Floats(_mm_srli_si128(hi, 8)), _mm256_loadu_ps(ab + i + 24), dot);
        }
      } else {
        for (int64_t i = 0; i < g.block_size; i += 16) {
          const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i));
          dot = _mm256_fmadd_ps(FloatsS8(raw), _mm256_loadu_ps(ab + i), dot);
          dot = _mm256_fmadd_ps(FloatsS8(_mm_srli_si128(raw, 8)), _mm256_loadu_ps(ab + i + 8), dot);
        }
      }
      const float sb = w.scales[(n + c) * g.blocks + b];
      acc[c] = _mm256_fmadd_ps(dot, _mm256_set1_ps(sb), acc[c]);
      correction[c] += sb * ZeroPointOf(w, n + c, b) * block_sums[b];
    }
  }
  for (int c = 0; c < kCols; ++c) y[n + c] = HorizontalSum(acc[c]) - correction[c];
}

template <int kBits>
void FloatOneRow(const NBitsWeights& w, const float* a, const float* block_sums, int64_t begin,
                 int64_t end, float* y) {
  int64_t n = begin;
  for (; n + 4 <= end; n += 4) FloatOneRowColumns<kBits, 4>(w, a, block_sums, n, y);
  for (; n < end; ++n) FloatOneRowColumns<kBits, 1>(w, a, block_sums, n, y);
}

}  // namespace

void DotColumnsInt8(const NBitsWeights& w, const QuantizedRows& q, int64_t row0, int rows,
                    int64_t begin, int64_t end, float* y, int64_t ldy) {
  const NBitsGeometry& g = w.g;
  if (rows == 1 && g.block_size >= 32) {
    const bool bits4 = g.bits == 4;
    if (w.zero_points != nullptr) {
      return bits4 ? Int8OneRowGroups<4, ZeroKind::kBytes>(w, q, row0, begin, end, y)
                   : Int8OneRowGroups<8, ZeroKind::kBytes>(w, q, row0, begin, end, y);
    }
    if (w.float_zero_points != nullptr) {
      return bits4 ? Int8OneRowGroups<4, ZeroKind::kFloats>(w, q, row0, begin, end, y)
                   : Int8OneRowGroups<8, ZeroKind::kFloats>(w, q, row0, begin, end, y);
    }
    if (!bits4 || q.zero_lanes != nullptr) {
      return bits4 ? Int8OneRowGroups<4, ZeroKind::kImplied>(w, q, row0, begin, end, y)
                   : Int8OneRowGroups<8, ZeroKind::kImplied>(w, q, row0, begin, end, y);
    }
  }
  for (int64_t n = begin; n < end; ++n) {
    if (g.bits == 4) {
      Int8DispatchZero<4>(w, q, row0, rows, n, y + n, ldy);
    } else {
      Int8DispatchZero<8>(w, q, row0, rows, n, y + n, ldy);
    }
  }
}

void DotColumnsFloat(const NBitsWeights& w, const float* a, int64_t lda, const float* block_sums,
                     int rows, int64_t begin, int64_t end, float* y, int64_t ldy) {
  if (rows == 1) {
    if (w.g.bits == 4) return FloatOneRow<4>(w, a, block_sums, begin, end, y);
    return FloatOneRow<8>(w, a, block_sums, begin, end, y);
  }
  for (int64_t n = begin; n < end; ++n) {
    if (w.g.bits == 4) {
      FloatDispatch<4>(w, a, lda, block_sums, rows, n, y + n, ldy);
    } else {
      FloatDispatch<8>(w, a, lda, block_sums, rows, n, y + n, ldy);
    }
  }
}

void DequantizeColumn(const NBitsWeights& w, int64_t n, float* out) {
  if (w.g.bits == 4) return DequantizeColumnAvx2<4>(w, n, out);
  return DequantizeColumnAvx2<8>(w, n, out);
}

}  // namespace epctx::exec::kernels::nbits_detail

#endif  // defined(__AVX2__)
