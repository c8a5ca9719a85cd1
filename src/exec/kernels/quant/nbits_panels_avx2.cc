// The int8 arithmetic of NBitsMatMul (accuracy_level 4) for prompts on AVX2 CPUs without AVX-512
// VNNI: a prompt's rows quantized per block as for the column products, multiplied by the 4-bit
// codes with vpmaddubsw, which multiplies 32 u8 x s8 pairs and adds neighbours into int16 lanes.
//
// The lanes are 8 activation rows: the rows' int8 codes are interleaved four at a time ([tile][k /
// 4][8 rows][4 codes]) and each weight column's codes (0..15, the unsigned operand) are broadcast
// four at a time. A pair of products is at most 2 x 15 x 128 = 3840, so eight groups of four add
// up in int16 without overflow (30720) before vpmaddwd widens them to int32; a block of 32 codes
// takes exactly one such widening. The zero point comes off the block's integer sum as zero point
// x the row's code sum over the block, and the block's sums are scaled by activation scale x
// weight scale into float sums: the same integers and the same float steps as the VNNI panels
// (nbits_gemm_vnni.cc).
//
// Weights are unpacked from the blob's 4-bit layout a panel of columns at a time (per thread),
// once per call; two row tiles (16 rows) stay in L1 while the panel's columns pass them.
#include "exec/kernels/quant/nbits_gemm.h"

#if defined(__AVX2__) && !(defined(__AVX512VNNI__) && defined(__AVX512BW__))

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "exec/kernels/common/parallel_for.h"

namespace epctx::exec::kernels::nbits_detail {
// Named apart from the VNNI panels' helpers (which a unity build may put beside these).
namespace avx2_panels {
namespace {

constexpr int64_t kTileRows = 8;  // int32 lanes of a ymm register
constexpr int kPairTiles = 2;     // row tiles multiplied together, sharing each weight broadcast
constexpr int64_t kPairRows = kPairTiles * kTileRows;
constexpr int kStepColumns = 4;  // 2 tiles x 4 columns of int16 sums stay in registers
constexpr int64_t kPanelColumns = 64;
constexpr int64_t kGroupsPerWidening = 8;  // groups of 4 codes whose int16 sums cannot overflow

// The rows' int8 codes interleaved for vpmaddubsw, and per block their scales and code sums.
struct RowTiles {
  int64_t tiles = 0;          // a multiple of kPairTiles
  int64_t groups = 0;         // groups of 4 codes in a row (row_codes / 4)
  std::vector<int8_t> codes;  // [tiles][groups][8 rows][4]
  std::vector<float> scales;  // [tiles][blocks][8]; 0 for the rows past m
  std::vector<int32_t> sums;  // [tiles][blocks][8]: the sum of the row's codes in the block
};

RowTiles TileRows(const NBitsGeometry& g, const QuantizedRows& q, int64_t m, int threads) {
  RowTiles t;
  t.tiles = (m + kPairRows - 1) / kPairRows * kPairTiles;
  t.groups = q.row_codes / 4;
  // A row past m holds codes 0 and scale 0: it adds nothing and is not stored.
  t.codes.assign(static_cast<size_t>(t.tiles * t.groups * kTileRows * 4), 0);
  t.scales.assign(static_cast<size_t>(t.tiles * g.blocks * kTileRows), 0.f);
  t.sums.assign(static_cast<size_t>(t.tiles * g.blocks * kTileRows), 0);
  ParallelForRanges(threads, m, kTileRows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t tile = r / kTileRows, lane = r % kTileRows;
      const int8_t* row = q.codes + r * q.row_codes;
      int8_t* dst = t.codes.data() + (tile * t.groups * kTileRows + lane) * 4;
      for (int64_t j = 0; j < t.groups; ++j) std::memcpy(dst + j * kTileRows * 4, row + 4 * j, 4);
      for (int64_t b = 0; b < g.blocks; ++b) {
        int32_t sum = 0;
        for (int64_t i = 0; i < g.block_size; ++i) sum += row[b * g.block_size + i];
        const size_t at = static_cast<size_t>((tile * g.blocks + b) * kTileRows + lane);
        t.scales[at] = q.scales[r * g.blocks + b];
        t.sums[at] = sum;
      }
    }
  });
  return t;
}

// A panel of columns unpacked: the codes 0..15 as bytes [columns][row_codes], and per block the
// zero point and the scale [columns][blocks]; columns past n are zero.
struct ColumnPanel {
  std::vector<uint8_t> codes;
  std::vector<int32_t> zeros;
  std::vector<float> scales;
};

void UnpackColumns(const NBitsWeights& w, int64_t row_codes, int64_t n0, int64_t count,
                   ColumnPanel& p) {
  const NBitsGeometry& g = w.g;
  p.codes.assign(static_cast<size_t>(kPanelColumns * row_codes), 0);
  p.zeros.assign(static_cast<size_t>(kPanelColumns * g.blocks), 0);
  p.scales.assign(static_cast<size_t>(kPanelColumns * g.blocks), 0.f);
  const int64_t group = std::min<int64_t>(g.block_size, 32);  // codes of one packed group
  const __m128i low_nibbles = _mm_set1_epi8(0x0f);
  for (int64_t c = 0; c < count; ++c) {
    const int64_t n = n0 + c;
    std::memcpy(p.scales.data() + c * g.blocks, w.scales + n * g.blocks,
                static_cast<size_t>(g.blocks) * sizeof(float));
    for (int64_t b = 0; b < g.blocks; ++b) {
      p.zeros[static_cast<size_t>(c * g.blocks + b)] =
          w.zero_points != nullptr ? w.zero_points[n * g.blocks + b] : g.implied_zero_point();
    }
    const uint8_t* src = w.codes + n * g.blocks * g.block_bytes;
    uint8_t* dst = p.codes.data() + c * row_codes;
    for (int64_t i = 0; i < row_codes; i += group, src += group / 2, dst += group) {
      if (group == 32) {
        const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm_and_si128(raw, low_nibbles));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 16),
                         _mm_and_si128(_mm_srli_epi16(raw, 4), low_nibbles));
      } else {
        const __m128i raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), _mm_and_si128(raw, low_nibbles));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + 8),
                         _mm_and_si128(_mm_srli_epi16(raw, 4), low_nibbles));
      }
    }
  }
}

// out [kStepColumns][16]: the float sums of row tiles tile0, tile0 + 1 by panel columns c0..c0+3.
// kBlockGroups: groups of 4 codes in a block (block_size / 4).
template <int64_t kBlockGroups>
void PairTimesColumns(const NBitsGeometry& g, const RowTiles& rows, int64_t tile0,
                      const ColumnPanel& p, int64_t row_codes, int64_t c0, float* out) {
  constexpr int64_t kWidening = std::min(kBlockGroups, kGroupsPerWidening);
  const int64_t tile_stride = rows.groups * kTileRows * 4;
  const int8_t* codes = rows.codes.data() + tile0 * tile_stride;
  const uint8_t* weights = p.codes.data() + c0 * row_codes;
  __m256 sums[kPairTiles][kStepColumns];
  for (auto& tile : sums) {
    for (__m256& s : tile) s = _mm256_setzero_ps();
  }
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t b = 0; b < g.blocks; ++b) {
    __m256i dots[kPairTiles][kStepColumns];
    for (auto& tile : dots) {
      for (__m256i& d : tile) d = _mm256_setzero_si256();
    }
    for (int64_t first = 0; first < kBlockGroups; first += kWidening) {
      __m256i pairs[kPairTiles][kStepColumns];
      for (auto& tile : pairs) {
        for (__m256i& s : tile) s = _mm256_setzero_si256();
      }
      const int64_t j0 = b * kBlockGroups + first;
      const int8_t* a = codes + j0 * 32;
      const uint8_t* wj = weights + j0 * 4;
#pragma GCC unroll 8
      for (int64_t j = 0; j < kWidening; ++j) {
        __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + j * 32));
        __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + tile_stride + j * 32));
        // In registers: GCC would otherwise fold each load into every product (8 loads, not 2).
        __asm__("" : "+x"(a0), "+x"(a1));
        for (int c = 0; c < kStepColumns; ++c) {
          int32_t four;
          std::memcpy(&four, wj + c * row_codes + 4 * j, 4);
          const __m256i wv = _mm256_set1_epi32(four);
          pairs[0][c] = _mm256_add_epi16(pairs[0][c], _mm256_maddubs_epi16(wv, a0));
          pairs[1][c] = _mm256_add_epi16(pairs[1][c], _mm256_maddubs_epi16(wv, a1));
          // One running sum each: GCC would regroup the integer additions into trees whose
          // terms do not fit in the 16 registers.
          __asm__("" : "+x"(pairs[0][c]), "+x"(pairs[1][c]));
        }
      }
      for (int t = 0; t < kPairTiles; ++t) {
        for (int c = 0; c < kStepColumns; ++c) {
          dots[t][c] = _mm256_add_epi32(dots[t][c], _mm256_madd_epi16(pairs[t][c], ones));
        }
      }
    }
    for (int t = 0; t < kPairTiles; ++t) {
      const size_t at = static_cast<size_t>(((tile0 + t) * g.blocks + b) * kTileRows);
      const __m256 sa = _mm256_loadu_ps(rows.scales.data() + at);
      const __m256i row_sums =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows.sums.data() + at));
      for (int c = 0; c < kStepColumns; ++c) {
        const size_t column_block = static_cast<size_t>((c0 + c) * g.blocks + b);
        const __m256i zero_part =
            _mm256_mullo_epi32(row_sums, _mm256_set1_epi32(p.zeros[column_block]));
        const __m256 dot = _mm256_cvtepi32_ps(_mm256_sub_epi32(dots[t][c], zero_part));
        const __m256 scale = _mm256_mul_ps(sa, _mm256_set1_ps(p.scales[column_block]));
        sums[t][c] = _mm256_fmadd_ps(dot, scale, sums[t][c]);
      }
    }
  }
  for (int t = 0; t < kPairTiles; ++t) {
    for (int c = 0; c < kStepColumns; ++c) {
      _mm256_storeu_ps(out + c * kPairRows + t * kTileRows, sums[t][c]);
    }
  }
}

using PairKernel = void (*)(const NBitsGeometry&, const RowTiles&, int64_t, const ColumnPanel&,
                            int64_t, int64_t, float*);

PairKernel PairKernelFor(int64_t block_size) {
  switch (block_size) {
    case 16:
      return PairTimesColumns<4>;
    case 32:
      return PairTimesColumns<8>;
    case 64:
      return PairTimesColumns<16>;
    case 128:
      return PairTimesColumns<32>;
    default:
      return PairTimesColumns<64>;  // 256, the largest block MakeNBitsGeometry takes
  }
}

}  // namespace
}  // namespace avx2_panels

bool Int8PanelsApply(const NBitsWeights& w) {
  return w.g.bits == 4 && w.float_zero_points == nullptr;
}

void Int8PanelMatMul(const NBitsWeights& w, const QuantizedRows& q, int64_t m, float* y,
                     int threads) {
  using namespace avx2_panels;
  const NBitsGeometry& g = w.g;
  const RowTiles rows = TileRows(g, q, m, threads);
  const PairKernel kernel = PairKernelFor(g.block_size);
  const int64_t width = PanelWidth(g.n, threads, kPanelColumns, kStepColumns);
  const int64_t panels = (g.n + width - 1) / width;
  std::vector<ColumnPanel> scratch(static_cast<size_t>(std::max(1, threads)));
  ParallelFor(threads, panels, [&](int64_t panel, int worker) {
    ColumnPanel& p = scratch[static_cast<size_t>(worker)];
    const int64_t n0 = panel * width;
    const int64_t count = std::min(width, g.n - n0);
    UnpackColumns(w, q.row_codes, n0, count, p);
    float out[kStepColumns * kPairRows];
    // The pair of row tiles outside: its codes stay in L1 while the panel's columns pass.
    for (int64_t tile0 = 0; tile0 < rows.tiles; tile0 += kPairTiles) {
      const int64_t pair_rows = std::min(kPairRows, m - tile0 * kTileRows);
      for (int64_t c0 = 0; c0 < count; c0 += kStepColumns) {
        kernel(g, rows, tile0, p, q.row_codes, c0, out);
        const int64_t columns = std::min<int64_t>(kStepColumns, count - c0);
        for (int64_t r = 0; r < pair_rows; ++r) {
          float* dst = y + (tile0 * kTileRows + r) * g.n + n0 + c0;
          for (int64_t c = 0; c < columns; ++c) dst[c] = out[c * kPairRows + r];
        }
      }
    }
  });
}

}  // namespace epctx::exec::kernels::nbits_detail

#endif  // defined(__AVX2__) && !(defined(__AVX512VNNI__) && defined(__AVX512BW__))
