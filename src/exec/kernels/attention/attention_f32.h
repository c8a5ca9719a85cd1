// The inner loops of attention over one KV head's cache rows, for up to kMaxQueryGroup query
// vectors at a time (the query heads that share the KV head, or neighbouring rows of one head):
// the scores of each query against a run of key rows, and the probability-weighted sum of the
// value rows. Each key and value row is loaded once for all the queries of the group, which is
// what grouped-query attention saves in memory traffic. head_size is a multiple of 8 (ONNX
// Runtime's GroupQueryAttention requires it); AVX2 + FMA where the build has them, portable
// loops otherwise.
#pragma once

#include <cstdint>

namespace epctx::exec::kernels {

inline constexpr int kMaxQueryGroup = 3;

// scores[r * ld + t] = scale * dot(q[r], keys + t * head_size) for r < rows, t < count.
void AttentionScoresF32(const float* const* q, int rows, const float* keys, int64_t count,
                        int64_t head_size, float scale, float* scores, int64_t ld);

// out[r][h] = factor[r] * sum over t < count of p[r * ld + t] * values[t * head_size + h],
// for r < rows, h < head_size.
void AttentionWeightedSumF32(const float* p, int64_t ld, int rows, const float* values,
                             int64_t count, int64_t head_size, const float* factor,
                             float* const* out);

}  // namespace epctx::exec::kernels
