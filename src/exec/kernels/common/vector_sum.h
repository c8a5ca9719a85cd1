// The sum of a 256-bit register's eight floats, for the AVX2 kernels.
#pragma once

#if defined(__AVX2__)

#include <immintrin.h>

namespace epctx::exec::kernels {

inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

}  // namespace epctx::exec::kernels

#endif  // defined(__AVX2__)
