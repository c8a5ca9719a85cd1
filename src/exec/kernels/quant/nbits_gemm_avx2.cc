// AVX2 column products of NBitsMatMul: up to 4 activation rows against one weight column, the
// column's codes unpacked once per block and used for every row. Instantiated per row count and
// weight format so that the per-row accumulators stay in registers.
#include "exec/kernels/quant/nbits_gemm.h"

#if defined(__AVX2__)

#include <immintrin.h>

namespace epctx::exec::kernels::nbits_detail {
namespace {

inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

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
void Int8Rows(const NBitsWeights& w, const QuantizedRows& q, int64_t row0, int64_t n, float* y,
              int64_t ldy) {
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

template <int kBits>
void Int8Dispatch(const NBitsWeights& w, const QuantizedRows& q, int64_t row0, int rows, int64_t n,
                  float* y, int64_t ldy) {
  switch (rows) {
    case 1:
      return Int8Rows<1, kBits>(w, q, row0, n, y, ldy);
    case 2:
      return Int8Rows<2, kBits>(w, q, row0, n, y, ldy);
    case 3:
      return Int8Rows<3, kBits>(w, q, row0, n, y, ldy);
    default:
      return Int8Rows<4, kBits>(w, q, row0, n, y, ldy);
  }
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

}  // namespace

void DotColumnInt8(const NBitsWeights& w, const QuantizedRows& q, int64_t row0, int rows, int64_t n,
                   float* y, int64_t ldy) {
  if (w.g.bits == 4) return Int8Dispatch<4>(w, q, row0, rows, n, y, ldy);
  return Int8Dispatch<8>(w, q, row0, rows, n, y, ldy);
}

void DotColumnFloat(const NBitsWeights& w, const float* a, int64_t lda, const float* block_sums,
                    int rows, int64_t n, float* y, int64_t ldy) {
  if (w.g.bits == 4) return FloatDispatch<4>(w, a, lda, block_sums, rows, n, y, ldy);
  return FloatDispatch<8>(w, a, lda, block_sums, rows, n, y, ldy);
}

}  // namespace epctx::exec::kernels::nbits_detail

#endif  // defined(__AVX2__)
