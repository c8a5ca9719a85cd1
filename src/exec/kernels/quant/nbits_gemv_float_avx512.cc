// The float arithmetic of NBitsMatMul (accuracy_level 0-3) for one activation row (a decode
// step) on AVX-512, for 4-bit weights in blocks of 32: each block's 16 code bytes are split into
// their low nibbles (codes 0-15 of the block, nbits_layout.h) and high nibbles (codes 16-31),
// widened to floats and multiplied with the row's 32 activations, and the block's dot product of
// codes and activations is scaled by the block's scale into the column's sum. The zero points come
// off after the loop, as their products with the scales and the row's block sums. The columns are
// read one at a time, codes and scales each as one sequential stream prefetched ahead, as the
// int8 arithmetic's one-row kernel reads them (nbits_gemm_vnni.cc).
#include "exec/kernels/quant/nbits_gemm.h"

#if defined(__AVX512F__) && defined(__AVX512BW__)

// GCC 12 warns that the AVX-512 intrinsics' undefined vectors "may be" used uninitialized where
// they are inlined (as in nbits_gemm_vnni.cc).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "exec/kernels/common/weight_stream.h"

namespace epctx::exec::kernels::nbits_detail {
namespace {

constexpr int64_t kBlock = 32;       // weights per block
constexpr int64_t kBlockBytes = 16;  // their codes' bytes

// One block's sum of codes x activations, before its scale: 16 code bytes, 32 activations.
__attribute__((always_inline)) inline __m512 BlockDot(const uint8_t* codes, const float* a) {
  const __m128i low4 = _mm_set1_epi8(0x0f);
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes));
  const __m512 lo = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_and_si128(raw, low4)));
  const __m512 hi =
      _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_and_si128(_mm_srli_epi16(raw, 4), low4)));
  return _mm512_fmadd_ps(hi, _mm512_loadu_ps(a + 16), _mm512_mul_ps(lo, _mm512_loadu_ps(a)));
}

// The sum over the blocks of column n of scale x zero point x the row's block sum.
float ZeroPointTerm(const NBitsWeights& w, const float* block_sums, int64_t n) {
  const int64_t blocks = w.g.blocks;
  const float* sb = w.scales + n * blocks;
  __m512 acc = _mm512_setzero_ps();
  for (int64_t b = 0; b < blocks; b += 16) {
    const int64_t count = std::min<int64_t>(16, blocks - b);
    const __mmask16 mask = static_cast<__mmask16>((1u << count) - 1);
    __m512 zp;
    if (w.zero_points != nullptr) {
      zp = _mm512_cvtepi32_ps(
          _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, w.zero_points + n * blocks + b)));
    } else if (w.float_zero_points != nullptr) {
      zp = _mm512_maskz_loadu_ps(mask, w.float_zero_points + n * blocks + b);
    } else {
      zp = _mm512_set1_ps(static_cast<float>(w.g.implied_zero_point()));
    }
    const __m512 s = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, block_sums + b),
                                   _mm512_maskz_loadu_ps(mask, sb + b));
    acc = _mm512_fmadd_ps(s, zp, acc);
  }
  return _mm512_reduce_add_ps(acc);
}

// y[n] from column n. Two accumulators, even and odd blocks, so that a block's multiply-add
// does not wait for the one before it.
void FloatColumn(const NBitsWeights& w, const float* a, const float* block_sums, int64_t n,
                 float* y) {
  const int64_t blocks = w.g.blocks;
  const uint8_t* codes = w.codes + n * blocks * kBlockBytes;
  const float* scales = w.scales + n * blocks;
  __m512 even = _mm512_setzero_ps(), odd = _mm512_setzero_ps();
  int64_t b = 0;
  for (; b + 2 <= blocks; b += 2) {
    if (b % 4 == 0) {  // one 64-byte line of codes per 4 blocks, of scales per 16
      PrefetchStream(codes + b * kBlockBytes + kStreamPrefetchBytes);
      if (b % 16 == 0) PrefetchStream(scales + b + kStreamPrefetchBytes / 4 / sizeof(float));
    }
    even = _mm512_fmadd_ps(BlockDot(codes + b * kBlockBytes, a + b * kBlock),
                           _mm512_set1_ps(scales[b]), even);
    odd = _mm512_fmadd_ps(BlockDot(codes + (b + 1) * kBlockBytes, a + (b + 1) * kBlock),
                          _mm512_set1_ps(scales[b + 1]), odd);
  }
  if (b < blocks) {
    even = _mm512_fmadd_ps(BlockDot(codes + b * kBlockBytes, a + b * kBlock),
                           _mm512_set1_ps(scales[b]), even);
  }
  y[n] = _mm512_reduce_add_ps(_mm512_add_ps(even, odd)) - ZeroPointTerm(w, block_sums, n);
}

void FloatColumns(const NBitsWeights& w, const float* a, const float* block_sums, int64_t begin,
                  int64_t end, float* y) {
  PrefetchStreamStart(w.codes + begin * w.g.blocks * kBlockBytes,
                      w.codes + end * w.g.blocks * kBlockBytes, kStreamPrefetchBytes);
  PrefetchStreamStart(w.scales + begin * w.g.blocks, w.scales + end * w.g.blocks,
                      kStreamPrefetchBytes / 4);
  for (int64_t n = begin; n < end; ++n) FloatColumn(w, a, block_sums, n, y);
}

}  // namespace

bool FloatOneRowAvx512Applies(const NBitsWeights& w) {
  return w.g.bits == 4 && w.g.block_size == kBlock;
}

void FloatOneRowAvx512(const NBitsWeights& w, const float* a, const float* block_sums, float* y,
                       int threads) {
  SplitStream(w.g.n, w.g.stream_bytes(), threads,
              [&](int64_t begin, int64_t end) { FloatColumns(w, a, block_sums, begin, end, y); });
}

}  // namespace epctx::exec::kernels::nbits_detail

#endif  // defined(__AVX512F__) && defined(__AVX512BW__)
