#include "exec/kernels/attention/rotary_f32.h"

#include <cstring>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace epctx::exec::kernels {

void RotaryRowF32(const float* x, const float* cos, const float* sin, int64_t rotary_dim,
                  int64_t head_size, bool interleaved, float* y) {
  const int64_t half = rotary_dim / 2;
  int64_t i = 0;
  if (interleaved) {
#if defined(__AVX2__) && defined(__FMA__)
    // Four pairs per vector: each angle's cosine and sine duplicated over its pair, the pair's
    // elements swapped, and fmaddsub giving a c - b s in even lanes and b c + a s in odd ones.
    const __m256i dup = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
    for (; i + 4 <= half; i += 4) {
      const __m256 v = _mm256_loadu_ps(x + 2 * i);
      const __m256 c = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(cos + i)), dup);
      const __m256 s = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(sin + i)), dup);
      const __m256 swapped = _mm256_permute_ps(v, 0xB1);
      _mm256_storeu_ps(y + 2 * i, _mm256_fmaddsub_ps(v, c, _mm256_mul_ps(swapped, s)));
    }
#endif
    for (; i < half; ++i) {
      const float a = x[2 * i];
      const float b = x[2 * i + 1];
      y[2 * i] = a * cos[i] - b * sin[i];
      y[2 * i + 1] = b * cos[i] + a * sin[i];
    }
  } else {
#if defined(__AVX2__) && defined(__FMA__)
    for (; i + 8 <= half; i += 8) {
      const __m256 a = _mm256_loadu_ps(x + i);
      const __m256 b = _mm256_loadu_ps(x + half + i);
      const __m256 c = _mm256_loadu_ps(cos + i);
      const __m256 s = _mm256_loadu_ps(sin + i);
      _mm256_storeu_ps(y + i, _mm256_fmsub_ps(a, c, _mm256_mul_ps(b, s)));
      _mm256_storeu_ps(y + half + i, _mm256_fmadd_ps(b, c, _mm256_mul_ps(a, s)));
    }
#endif
    for (; i < half; ++i) {
      const float a = x[i];
      const float b = x[half + i];
      y[i] = a * cos[i] - b * sin[i];
      y[half + i] = b * cos[i] + a * sin[i];
    }
  }
  if (y != x && rotary_dim < head_size) {
    std::memcpy(y + rotary_dim, x + rotary_dim,
                static_cast<size_t>(head_size - rotary_dim) * sizeof(float));
  }
}

}  // namespace epctx::exec::kernels
