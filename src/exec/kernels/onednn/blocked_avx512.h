// What our own AVX-512 convolutions of 16-channel blocks (blocked_conv1x1.cc,
// blocked_depthwise_conv.cc) share: the block, and the post-ops a oneDNN primitive would apply
// (PrimitivePostOpsArePlain: the residual addition, Relu/LeakyRelu, Clip, Linear) on sums still
// in registers. Include only where __AVX512F__ is defined.
#pragma once

// GCC 12 warns that _mm512_max_ps's and _mm512_min_ps's undefined pass-through operand "may be
// used uninitialized" where they are inlined (in the files that include this).
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstdint>
#include <span>

#include "exec/kernels/onednn/post_ops.h"

namespace epctx::exec::kernels::onednn {

// Channels of an activation block (nChw16c), and inputs and outputs of a weight block.
inline constexpr int64_t kChannelBlock = 16;

inline int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Applies `ops` in order to the sums of kPixels consecutive pixels of one block, one op at a
// time over every register (one branch per op); kAddTensor adds residual[16 * p, 16 * p + 16)
// to pixel p. Other kinds are left alone (PrimitivePostOpsArePlain rules them out).
template <int kPixels>
__attribute__((always_inline)) inline void ApplyPlainPostOps(std::span<const PostOp> ops,
                                                             const float* residual,
                                                             __m512 (&acc)[kPixels]) {
  for (const PostOp& op : ops) {
    const __m512 alpha = _mm512_set1_ps(op.alpha);
    const __m512 beta = _mm512_set1_ps(op.beta);
    switch (op.kind) {
      case PostOpKind::kAddTensor:
        for (int p = 0; p < kPixels; ++p) {
          acc[p] = _mm512_add_ps(acc[p], _mm512_loadu_ps(residual + p * 16));
        }
        break;
      case PostOpKind::kRelu:  // alpha * x at or below 0, as ApplyPrimitivePostOps
        for (__m512& v : acc) {
          const __mmask16 positive = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ);
          v = _mm512_mask_blend_ps(positive, _mm512_mul_ps(v, alpha), v);
        }
        break;
      case PostOpKind::kClip:
        for (__m512& v : acc) v = _mm512_min_ps(_mm512_max_ps(v, alpha), beta);
        break;
      case PostOpKind::kLinear:
        for (__m512& v : acc) v = _mm512_fmadd_ps(v, alpha, beta);
        break;
      default:
        break;
    }
  }
}

}  // namespace epctx::exec::kernels::onednn
