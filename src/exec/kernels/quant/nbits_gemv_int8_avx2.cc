// The int8 arithmetic of NBitsMatMul (accuracy_level 4) for one activation row (a decode step) on
// AVX2 CPUs without AVX-512 VNNI, for 4-bit weights in blocks of 32 with integer or implied zero
// points: two blocks per step. The 32 bytes of codes of blocks b, b + 1 (one load: they lie one
// after the other) split into their low nibbles (codes 0-15 of each block, one block per 128-bit
// half) and their high nibbles (codes 16-31), and two vpmaddubsw against the row's int8 codes laid
// out the same way once per call, one vpaddw and one vpmaddwd leave block b's integer sum in
// lanes 0-3 and block b + 1's in lanes 4-7 (a lane's four pairs are at most 4 x 15 x 128 = 7680,
// inside int16). One conversion and one multiply-add by the activation and weight scales follow:
// per 64 weights about 13 instructions, against about 20 for a block at a time (the column
// products of nbits_gemm_avx2.cc), which were bound by them rather than by the memory.
#include "exec/kernels/quant/nbits_gemm.h"

#if defined(__AVX2__) && !(defined(__AVX512VNNI__) && defined(__AVX512BW__))

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "exec/kernels/common/vector_sum.h"
#include "exec/kernels/common/weight_stream.h"

namespace epctx::exec::kernels::nbits_detail {
namespace {

// The row's side of one pair of blocks (GroupRowBlocks, two blocks a group), loaded once for all
// the columns.
struct RowPair {
  __m256i low, high;  // the codes against the weights' low and high nibbles
  __m256 scales;
  __m256i start;
};

inline RowPair LoadRowPair(const RowBlockGroups& rp, int64_t pair) {
  const int8_t* a = rp.codes.data() + pair * 64;
  return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a)),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 32)),
          _mm256_loadu_ps(rp.scales.data() + pair * 8),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rp.starts.data() + pair * 8))};
}

// One pair of blocks of one column into acc. kHalf: the last pair of an odd number of blocks,
// whose second block does not exist (its codes and scale are not read; the next column's lie
// there, or nothing).
template <bool kHalf>
__attribute__((always_inline)) inline __m256 PairStep(const uint8_t* codes, const float* scales,
                                                      const RowPair& a, __m256 acc) {
  const __m256i low_nibbles = _mm256_set1_epi8(0x0f);
  const __m256i pair_lanes = _mm256_set_epi32(1, 1, 1, 1, 0, 0, 0, 0);
  __m256i raw;
  __m256 sb2;  // the pair's 2 weight scales, in lanes 0 and 1
  if constexpr (kHalf) {
    raw = _mm256_zextsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes)));
    sb2 = _mm256_zextps128_ps256(_mm_load_ss(scales));
  } else {
    raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes));
    // An unaligned 8-byte load (scales are 4-byte aligned: vbroadcastsd's intrinsic would read
    // them as a double, which needs 8).
    sb2 = _mm256_zextps128_ps256(
        _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales))));
  }
  const __m256i low = _mm256_and_si256(raw, low_nibbles);
  const __m256i high = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low_nibbles);
  const __m256i pairs =
      _mm256_add_epi16(_mm256_maddubs_epi16(low, a.low), _mm256_maddubs_epi16(high, a.high));
  const __m256i dot = _mm256_add_epi32(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)), a.start);
  const __m256 sb = _mm256_permutevar8x32_ps(sb2, pair_lanes);
  return _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(a.scales, sb), acc);
}

// y[n..n + kCols) from kCols columns, the pair's row data loaded once for all of them (four
// columns: four multiply-add chains, which one column's single chain would wait on).
template <int kCols>
void PairStepColumns(const NBitsWeights& w, const QuantizedRows& q, int64_t row,
                     const RowBlockGroups& rp, int64_t n, float* y) {
  const int64_t blocks = w.g.blocks;
  const int64_t column_bytes = blocks * 16;
  const uint8_t* codes[kCols];
  const float* scales[kCols];
  __m256 acc[kCols];
  for (int c = 0; c < kCols; ++c) {
    codes[c] = w.codes + (n + c) * column_bytes;
    scales[c] = w.scales + (n + c) * blocks;
    acc[c] = _mm256_setzero_ps();
  }
  // The columns' codes (and scales) lie one after the other: prefetched ahead as one stream,
  // kCols pairs of blocks of it per step.
  const char* codes_ahead = reinterpret_cast<const char*>(codes[0]) + kStreamPrefetchBytes;
  const char* scales_ahead = reinterpret_cast<const char*>(scales[0]) + kStreamPrefetchBytes / 4;
  constexpr int64_t kStepBytes = kCols * 32;
  const int64_t full = blocks / 2;
  for (int64_t pair = 0; pair < full; ++pair) {
    for (int64_t line = 0; line < kStepBytes; line += 64) {
      PrefetchStream(codes_ahead + pair * kStepBytes + line);
    }
    PrefetchStream(scales_ahead + pair * kCols * 2 * static_cast<int64_t>(sizeof(float)));
    const RowPair a = LoadRowPair(rp, pair);
    for (int c = 0; c < kCols; ++c) {
      acc[c] = PairStep<false>(codes[c] + pair * 32, scales[c] + pair * 2, a, acc[c]);
    }
  }
  if (full * 2 < blocks) {
    const RowPair a = LoadRowPair(rp, full);
    for (int c = 0; c < kCols; ++c) {
      acc[c] = PairStep<true>(codes[c] + full * 32, scales[c] + full * 2, a, acc[c]);
    }
  }
  const float* row_sums = q.scaled_sums + row * blocks;
  for (int c = 0; c < kCols; ++c) {
    float sum = HorizontalSum(acc[c]);
    if (w.zero_points != nullptr) {
      // The integer zero points, left out of the integer sums: activation scale x the block's
      // code sum (scaled_sums) x weight scale x zero point, over the blocks.
      const int8_t* zero = w.zero_points + (n + c) * blocks;
      float correction = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        correction += row_sums[b] * scales[c][b] * static_cast<float>(zero[b]);
      }
      sum -= correction;
    }
    y[n + c] = sum;
  }
}

}  // namespace

bool Int8DecodeStepApplies(const NBitsWeights& w) {
  return w.g.bits == 4 && w.g.block_size == 32 && w.float_zero_points == nullptr;
}

void Int8DecodeStep(const NBitsWeights& w, const QuantizedRows& q, int64_t row, float* y,
                    int threads) {
  const RowBlockGroups rp = GroupRowBlocks(w.g, q, row, 2, w.zero_points == nullptr);
  SplitStream(w.g.n, w.g.stream_bytes(), threads, [&](int64_t begin, int64_t end) {
    PrefetchStreamStart(w.codes + begin * w.g.blocks * 16, w.codes + end * w.g.blocks * 16,
                        kStreamPrefetchBytes);
    PrefetchStreamStart(w.scales + begin * w.g.blocks, w.scales + end * w.g.blocks,
                        kStreamPrefetchBytes / 4);
    int64_t n = begin;
    for (; n + 4 <= end; n += 4) PairStepColumns<4>(w, q, row, rp, n, y);
    for (; n < end; ++n) PairStepColumns<1>(w, q, row, rp, n, y);
  });
}

}  // namespace epctx::exec::kernels::nbits_detail

#endif  // defined(__AVX2__) && !(defined(__AVX512VNNI__) && defined(__AVX512BW__))
