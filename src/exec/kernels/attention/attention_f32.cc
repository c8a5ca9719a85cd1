#include "exec/kernels/attention/attention_f32.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace epctx::exec::kernels {
namespace {

#if defined(__AVX2__) && defined(__FMA__)

// The four horizontal sums of a0..a3, in order.
inline __m128 Sum4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  const __m256 s = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
  return _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
}

inline float Sum1(__m256 a) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

// R queries against four keys per step: 4R accumulators, each key vector loaded once for the R
// queries; the leftover keys one at a time.
template <int R>
void ScoresAvx2(const float* const* q, const float* keys, int64_t count, int64_t head_size,
                float scale, float* scores, int64_t ld) {
  const __m128 vscale = _mm_set1_ps(scale);
  int64_t t = 0;
  for (; t + 4 <= count; t += 4) {
    const float* k0 = keys + t * head_size;
    const float* k1 = k0 + head_size;
    const float* k2 = k1 + head_size;
    const float* k3 = k2 + head_size;
    __m256 acc[R][4];
    for (int r = 0; r < R; ++r) {
      for (int j = 0; j < 4; ++j) acc[r][j] = _mm256_setzero_ps();
    }
    for (int64_t h = 0; h < head_size; h += 8) {
      __m256 qv[R];
      for (int r = 0; r < R; ++r) qv[r] = _mm256_loadu_ps(q[r] + h);
      __m256 kv = _mm256_loadu_ps(k0 + h);
      for (int r = 0; r < R; ++r) acc[r][0] = _mm256_fmadd_ps(qv[r], kv, acc[r][0]);
      kv = _mm256_loadu_ps(k1 + h);
      for (int r = 0; r < R; ++r) acc[r][1] = _mm256_fmadd_ps(qv[r], kv, acc[r][1]);
      kv = _mm256_loadu_ps(k2 + h);
      for (int r = 0; r < R; ++r) acc[r][2] = _mm256_fmadd_ps(qv[r], kv, acc[r][2]);
      kv = _mm256_loadu_ps(k3 + h);
      for (int r = 0; r < R; ++r) acc[r][3] = _mm256_fmadd_ps(qv[r], kv, acc[r][3]);
    }
    for (int r = 0; r < R; ++r) {
      _mm_storeu_ps(scores + r * ld + t,
                    _mm_mul_ps(vscale, Sum4(acc[r][0], acc[r][1], acc[r][2], acc[r][3])));
    }
  }
  for (; t < count; ++t) {
    const float* k = keys + t * head_size;
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t h = 0; h < head_size; h += 8) {
      const __m256 kv = _mm256_loadu_ps(k + h);
      for (int r = 0; r < R; ++r) acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(q[r] + h), kv, acc[r]);
    }
    for (int r = 0; r < R; ++r) scores[r * ld + t] = scale * Sum1(acc[r]);
  }
}

// R probability rows against value rows, C vectors (8 floats each) of the head at a time: each
// value vector is loaded once for the R rows.
template <int R, int C>
void WeightedSumColumnsAvx2(const float* p, int64_t ld, const float* values, int64_t count,
                            int64_t head_size, int64_t h0, const float* factor, float* const* out) {
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  }
  const float* v = values + h0;
  for (int64_t t = 0; t < count; ++t, v += head_size) {
    __m256 vv[C];
    for (int c = 0; c < C; ++c) vv[c] = _mm256_loadu_ps(v + 8 * c);
    for (int r = 0; r < R; ++r) {
      const __m256 pr = _mm256_broadcast_ss(p + r * ld + t);
      for (int c = 0; c < C; ++c) acc[r][c] = _mm256_fmadd_ps(pr, vv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r) {
    const __m256 f = _mm256_set1_ps(factor[r]);
    for (int c = 0; c < C; ++c) _mm256_storeu_ps(out[r] + h0 + 8 * c, _mm256_mul_ps(acc[r][c], f));
  }
}

template <int R>
void WeightedSumAvx2(const float* p, int64_t ld, const float* values, int64_t count,
                     int64_t head_size, const float* factor, float* const* out) {
  int64_t h = 0;
  for (; h + 16 <= head_size; h += 16) {
    WeightedSumColumnsAvx2<R, 2>(p, ld, values, count, head_size, h, factor, out);
  }
  if (h < head_size) WeightedSumColumnsAvx2<R, 1>(p, ld, values, count, head_size, h, factor, out);
}

#endif  // AVX2 + FMA

void ScoresPortable(const float* const* q, int rows, const float* keys, int64_t count,
                    int64_t head_size, float scale, float* scores, int64_t ld) {
  for (int64_t t = 0; t < count; ++t) {
    const float* k = keys + t * head_size;
    for (int r = 0; r < rows; ++r) {
      float sum = 0.0f;
      for (int64_t h = 0; h < head_size; ++h) sum += q[r][h] * k[h];
      scores[r * ld + t] = scale * sum;
    }
  }
}

void WeightedSumPortable(const float* p, int64_t ld, int rows, const float* values, int64_t count,
                         int64_t head_size, const float* factor, float* const* out) {
  for (int r = 0; r < rows; ++r) {
    float* o = out[r];
    for (int64_t h = 0; h < head_size; ++h) o[h] = 0.0f;
    for (int64_t t = 0; t < count; ++t) {
      const float w = p[r * ld + t];
      const float* v = values + t * head_size;
      for (int64_t h = 0; h < head_size; ++h) o[h] += w * v[h];
    }
    for (int64_t h = 0; h < head_size; ++h) o[h] *= factor[r];
  }
}

}  // namespace

void AttentionScoresF32(const float* const* q, int rows, const float* keys, int64_t count,
                        int64_t head_size, float scale, float* scores, int64_t ld) {
#if defined(__AVX2__) && defined(__FMA__)
  if (head_size % 8 == 0) {
    switch (rows) {
      case 1:
        return ScoresAvx2<1>(q, keys, count, head_size, scale, scores, ld);
      case 2:
        return ScoresAvx2<2>(q, keys, count, head_size, scale, scores, ld);
      case 3:
        return ScoresAvx2<3>(q, keys, count, head_size, scale, scores, ld);
      default:
        break;
    }
  }
#endif
  ScoresPortable(q, rows, keys, count, head_size, scale, scores, ld);
}

void AttentionWeightedSumF32(const float* p, int64_t ld, int rows, const float* values,
                             int64_t count, int64_t head_size, const float* factor,
                             float* const* out) {
#if defined(__AVX2__) && defined(__FMA__)
  if (head_size % 8 == 0) {
    switch (rows) {
      case 1:
        return WeightedSumAvx2<1>(p, ld, values, count, head_size, factor, out);
      case 2:
        return WeightedSumAvx2<2>(p, ld, values, count, head_size, factor, out);
      case 3:
        return WeightedSumAvx2<3>(p, ld, values, count, head_size, factor, out);
      default:
        break;
    }
  }
#endif
  WeightedSumPortable(p, ld, rows, values, count, head_size, factor, out);
}

}  // namespace epctx::exec::kernels
