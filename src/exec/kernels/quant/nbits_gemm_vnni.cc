// The int8 arithmetic of NBitsMatMul (accuracy_level 4) on AVX-512 VNNI, for many rows and for one
// (a decode step, at the end of the file): a prompt's rows quantized per block as for the column
// products, then multiplied by 4-bit codes with vpdpbusd, which adds four u8 x s8 products into
// each int32 lane in one instruction.
//
// vpdpbusd takes one unsigned and one signed operand; the signed one can be broadcast from memory.
// So the lanes are 16 activation rows: the rows' int8 codes are stored shifted to unsigned (+128)
// and interleaved four at a time ([tile][k / 4][16 rows][4 codes]), and each weight column's
// codes minus their zero point (-15..15, signed) are broadcast four at a time. Per block the
// shift is taken off by starting each sum at -128 x (the column's sum of codes - zero point over
// the block), and the block's int32 sums are scaled by activation scale x weight scale into
// float sums. The result is the int8 arithmetic up to the order of the float additions.
//
// Weights are unpacked from the blob's 4-bit layout a panel of columns at a time (per thread),
// once per call, and read from L1 by every tile of rows.
#include "exec/kernels/quant/nbits_gemm.h"

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)

// GCC 12 warns that the AVX-512 intrinsics' undefined vectors (the upper lanes of a cast, the
// merge source of an unmasked conversion, _mm512_reduce_add_ps's halves) "may be" or "is used
// uninitialized" where they are inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/weight_stream.h"

namespace epctx::exec::kernels::nbits_detail {
namespace {

constexpr int64_t kTileRows = 16;  // int32 lanes of a zmm register
constexpr int kStepColumns = 8;    // columns whose sums stay in registers at once
constexpr int64_t kPanelColumns = 64;

// The rows' codes, shifted and interleaved for vpdpbusd, and their block scales by tile.
struct RowTiles {
  int64_t tiles = 0;
  int64_t groups = 0;          // groups of 4 codes in a row (row_codes / 4)
  std::vector<uint8_t> codes;  // [tiles][groups][16][4]
  std::vector<float> scales;   // [tiles][blocks][16]; 0 for the rows past m
};

RowTiles TileRows(const NBitsGeometry& g, const QuantizedRows& q, int64_t m, int threads) {
  RowTiles t;
  t.tiles = (m + kTileRows - 1) / kTileRows;
  t.groups = q.row_codes / 4;
  // A row past m holds code 0 (128 shifted) and scale 0: it adds nothing and is not stored.
  t.codes.assign(static_cast<size_t>(t.tiles * t.groups * kTileRows * 4), 0x80);
  t.scales.assign(static_cast<size_t>(t.tiles * g.blocks * kTileRows), 0.f);
  ParallelForRanges(threads, m, kTileRows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t tile = r / kTileRows, lane = r % kTileRows;
      const int8_t* row = q.codes + r * q.row_codes;
      uint8_t* dst = t.codes.data() + (tile * t.groups * kTileRows + lane) * 4;
      for (int64_t j = 0; j < t.groups; ++j) {
        uint32_t four;
        std::memcpy(&four, row + 4 * j, 4);
        four ^= 0x80808080u;  // int8 -> uint8 + 128, byte by byte
        std::memcpy(dst + j * kTileRows * 4, &four, 4);
      }
      for (int64_t b = 0; b < g.blocks; ++b) {
        t.scales[static_cast<size_t>((tile * g.blocks + b) * kTileRows + lane)] =
            q.scales[r * g.blocks + b];
      }
    }
  });
  return t;
}

// A panel of columns unpacked: codes - zero point as int8 [columns][row_codes], per block -128 x
// their sum [columns][blocks], and the scales [columns][blocks]; columns past n are zero.
struct ColumnPanel {
  std::vector<int8_t> weights;
  std::vector<int32_t> starts;
  std::vector<float> scales;
};

void UnpackColumns(const NBitsWeights& w, int64_t row_codes, int64_t n0, int64_t count,
                   ColumnPanel& p) {
  const NBitsGeometry& g = w.g;
  p.weights.assign(static_cast<size_t>(kPanelColumns * row_codes), 0);
  p.starts.assign(static_cast<size_t>(kPanelColumns * g.blocks), 0);
  p.scales.assign(static_cast<size_t>(kPanelColumns * g.blocks), 0.f);
  const int64_t group = std::min<int64_t>(g.block_size, 32);  // codes of one packed group
  const __m128i low_nibbles = _mm_set1_epi8(0x0f);
  for (int64_t c = 0; c < count; ++c) {
    const int64_t n = n0 + c;
    std::memcpy(p.scales.data() + c * g.blocks, w.scales + n * g.blocks,
                static_cast<size_t>(g.blocks) * sizeof(float));
    for (int64_t b = 0; b < g.blocks; ++b) {
      const int zero = w.zero_points != nullptr ? w.zero_points[n * g.blocks + b] : 8;
      const __m128i zero_bytes = _mm_set1_epi8(static_cast<char>(zero));
      const uint8_t* src = w.codes + (n * g.blocks + b) * g.block_bytes;
      int8_t* dst = p.weights.data() + c * row_codes + b * g.block_size;
      int64_t code_sum = 0;
      for (int64_t i = 0; i < g.block_size; i += group, src += group / 2, dst += group) {
        const __m128i raw = group == 32 ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(src))
                                        : _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src));
        const __m128i lo = _mm_and_si128(raw, low_nibbles);
        const __m128i hi = _mm_and_si128(_mm_srli_epi16(raw, 4), low_nibbles);
        // Bytes past a group of 16's 8 are zero in `raw`, so they add nothing to the sums.
        const __m128i sums = _mm_add_epi64(_mm_sad_epu8(lo, _mm_setzero_si128()),
                                           _mm_sad_epu8(hi, _mm_setzero_si128()));
        code_sum += _mm_cvtsi128_si64(sums) + _mm_extract_epi64(sums, 1);
        const __m128i lo_w = _mm_sub_epi8(lo, zero_bytes);
        const __m128i hi_w = _mm_sub_epi8(hi, zero_bytes);
        if (group == 32) {
          _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), lo_w);
          _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 16), hi_w);
        } else {
          _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), lo_w);
          _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + 8), hi_w);
        }
      }
      const int64_t weight_sum = code_sum - g.block_size * zero;
      p.starts[static_cast<size_t>(c * g.blocks + b)] = static_cast<int32_t>(-128 * weight_sum);
    }
  }
}

// out [kStepColumns][16]: the float sums of tile `tile` by panel columns c0..c0+7.
void TileTimesColumns(const NBitsGeometry& g, const RowTiles& rows, int64_t tile,
                      const ColumnPanel& p, int64_t row_codes, int64_t c0, float* out) {
  __m512 sums[kStepColumns];
  for (__m512& s : sums) s = _mm512_setzero_ps();
  const uint8_t* codes = rows.codes.data() + tile * rows.groups * kTileRows * 4;
  const float* row_scales = rows.scales.data() + tile * g.blocks * kTileRows;
  const int8_t* weights = p.weights.data() + c0 * row_codes;
  const int64_t groups_per_block = g.block_size / 4;
  for (int64_t b = 0; b < g.blocks; ++b) {
    __m512i dots[kStepColumns];
    for (int c = 0; c < kStepColumns; ++c) {
      dots[c] = _mm512_set1_epi32(p.starts[static_cast<size_t>((c0 + c) * g.blocks + b)]);
    }
    for (int64_t j = b * groups_per_block; j < (b + 1) * groups_per_block; ++j) {
      const __m512i a = _mm512_loadu_si512(codes + j * kTileRows * 4);
      for (int c = 0; c < kStepColumns; ++c) {
        int32_t four;
        std::memcpy(&four, weights + c * row_codes + 4 * j, 4);
        dots[c] = _mm512_dpbusd_epi32(dots[c], a, _mm512_set1_epi32(four));
      }
    }
    const __m512 sa = _mm512_loadu_ps(row_scales + b * kTileRows);
    for (int c = 0; c < kStepColumns; ++c) {
      const __m512 scale =
          _mm512_mul_ps(sa, _mm512_set1_ps(p.scales[static_cast<size_t>((c0 + c) * g.blocks + b)]));
      sums[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dots[c]), scale, sums[c]);
    }
  }
  for (int c = 0; c < kStepColumns; ++c) _mm512_storeu_ps(out + c * kTileRows, sums[c]);
}

// One activation row (a decode step) against 4-bit columns in blocks of 32, four blocks per
// step: the 64 bytes of codes of blocks b..b+3 split into their low nibbles (codes 0-15 of each
// block) and their high nibbles (codes 16-31), and two vpdpbusd against the row's int8 codes laid
// out the same way once per call leave block b + l / 4's integer sum in lane l. Per step and
// column that is one 64-byte load, two products, one conversion and one multiply-add for 128
// weights, which keeps the loop close to the memory's speed. The row is laid out by
// GroupRowBlocks (nbits_gemm.h), four blocks a group.

// For integer zero points: the sum over the blocks of column n of the activation's scale x its
// codes' sum x the weight scale x the zero point, which the integer products leave out.
float ZeroPointCorrection(const NBitsWeights& w, const float* row_sums, int64_t n) {
  const int64_t blocks = w.g.blocks;
  const float* sb = w.scales + n * blocks;
  const int8_t* zero = w.zero_points + n * blocks;
  __m512 acc = _mm512_setzero_ps();
  for (int64_t b = 0; b < blocks; b += 16) {
    const int64_t count = std::min<int64_t>(16, blocks - b);
    const __mmask16 mask = static_cast<__mmask16>((1u << count) - 1);
    const __m512 zp =
        _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, zero + b)));
    const __m512 s = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, row_sums + b),
                                   _mm512_maskz_loadu_ps(mask, sb + b));
    acc = _mm512_fmadd_ps(s, zp, acc);
  }
  return _mm512_reduce_add_ps(acc);
}

// The columns are taken one at a time, all of a column's quads before the next column: the
// columns lie one after the other in the blob, so the codes are read as one sequential stream
// and the scales as another, which the prefetchers follow best (four columns at a time, four
// interleaved streams, read 11-16 GB/s here against 19-22). Both are also prefetched in software
// (weight_stream.h), the scales a quarter as far ahead, as they are a quarter of the bytes.
constexpr int64_t kPrefetchBytes = kStreamPrefetchBytes;

// One quad (4 blocks, 128 weights) of a column into acc. kMasked: the last, partial quad, whose
// codes and scales are loaded under the masks (the next column's follow them).
template <bool kMasked>
__attribute__((always_inline)) inline __m512 QuadStep(const uint8_t* codes, const float* scales,
                                                      const RowBlockGroups& rq, int64_t quad,
                                                      __mmask64 code_mask, __mmask16 scale_mask,
                                                      __m512 acc) {
  const __m512i low_nibbles = _mm512_set1_epi8(0x0f);
  // Lane l takes the scale of block 4 * quad + l / 4.
  const __m512i quad_lanes = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
  const uint8_t* src = codes + quad * 64;
  const float* sb_src = scales + quad * 4;
  __m512i raw;
  __m512 sb4;  // the quad's 4 scales in lanes 0-3
  if constexpr (kMasked) {
    raw = _mm512_maskz_loadu_epi8(code_mask, src);
    sb4 = _mm512_maskz_loadu_ps(scale_mask, sb_src);
  } else {
    PrefetchStream(src + kPrefetchBytes);
    PrefetchStream(sb_src + kPrefetchBytes / 4 / sizeof(float));
    raw = _mm512_loadu_si512(src);
    sb4 = _mm512_castps128_ps512(_mm_loadu_ps(sb_src));
  }
  const __m512i a_low = _mm512_loadu_si512(rq.codes.data() + quad * 128);
  const __m512i a_high = _mm512_loadu_si512(rq.codes.data() + quad * 128 + 64);
  const __m512 sa = _mm512_loadu_ps(rq.scales.data() + quad * 16);
  const __m512i start = _mm512_loadu_si512(rq.starts.data() + quad * 16);
  const __m512i low = _mm512_and_si512(raw, low_nibbles);
  const __m512i high = _mm512_and_si512(_mm512_srli_epi16(raw, 4), low_nibbles);
  const __m512i dot = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(start, low, a_low), high, a_high);
  const __m512 sb = _mm512_permutexvar_ps(quad_lanes, sb4);
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(sa, sb), acc);
}

// y[n] from column n.
void OneRowColumn(const NBitsWeights& w, const QuantizedRows& q, int64_t row,
                  const RowBlockGroups& rq, int64_t n, float* y) {
  const int64_t blocks = w.g.blocks;
  const uint8_t* codes = w.codes + n * blocks * 16;
  const float* scales = w.scales + n * blocks;
  __m512 acc = _mm512_setzero_ps();
  const int64_t full = blocks / 4;
  for (int64_t quad = 0; quad < full; ++quad) {
    acc = QuadStep<false>(codes, scales, rq, quad, 0, 0, acc);
  }
  if (const int64_t tail = blocks - full * 4; tail > 0) {
    acc = QuadStep<true>(codes, scales, rq, full, (__mmask64{1} << (tail * 16)) - 1,
                         static_cast<__mmask16>((1u << tail) - 1), acc);
  }
  y[n] = _mm512_reduce_add_ps(acc);
  if (w.zero_points != nullptr) y[n] -= ZeroPointCorrection(w, q.scaled_sums + row * blocks, n);
}

// Columns [begin, end) of the one-row product.
void OneRowColumns(const NBitsWeights& w, const QuantizedRows& q, int64_t row,
                   const RowBlockGroups& rq, int64_t begin, int64_t end, float* y) {
  PrefetchStreamStart(w.codes + begin * w.g.blocks * 16, w.codes + end * w.g.blocks * 16,
                      kPrefetchBytes);
  PrefetchStreamStart(w.scales + begin * w.g.blocks, w.scales + end * w.g.blocks,
                      kPrefetchBytes / 4);
  for (int64_t n = begin; n < end; ++n) OneRowColumn(w, q, row, rq, n, y);
}

}  // namespace

bool Int8DecodeStepApplies(const NBitsWeights& w) {
  return w.g.bits == 4 && w.g.block_size == 32 && w.float_zero_points == nullptr;
}

void Int8DecodeStep(const NBitsWeights& w, const QuantizedRows& q, int64_t row, float* y,
                    int threads) {
  const RowBlockGroups rq = GroupRowBlocks(w.g, q, row, 4, w.zero_points == nullptr);
  SplitStream(w.g.n, w.g.stream_bytes(), threads,
              [&](int64_t begin, int64_t end) { OneRowColumns(w, q, row, rq, begin, end, y); });
}

bool Int8PanelsApply(const NBitsWeights& w) {
  return w.g.bits == 4 && w.float_zero_points == nullptr;
}

void Int8PanelMatMul(const NBitsWeights& w, const QuantizedRows& q, int64_t m, float* y,
                     int threads) {
  const NBitsGeometry& g = w.g;
  const RowTiles rows = TileRows(g, q, m, threads);
  const int64_t width = PanelWidth(g.n, threads, kPanelColumns, kStepColumns);
  const int64_t panels = (g.n + width - 1) / width;
  std::vector<ColumnPanel> scratch(static_cast<size_t>(std::max(1, threads)));
  ParallelFor(threads, panels, [&](int64_t panel, int worker) {
    ColumnPanel& p = scratch[static_cast<size_t>(worker)];
    const int64_t n0 = panel * width;
    const int64_t count = std::min(width, g.n - n0);
    UnpackColumns(w, q.row_codes, n0, count, p);
    float out[kStepColumns * kTileRows];
    for (int64_t c0 = 0; c0 < count; c0 += kStepColumns) {
      const int64_t columns = std::min<int64_t>(kStepColumns, count - c0);
      for (int64_t tile = 0; tile < rows.tiles; ++tile) {
        TileTimesColumns(g, rows, tile, p, q.row_codes, c0, out);
        const int64_t tile_rows = std::min(kTileRows, m - tile * kTileRows);
        for (int64_t r = 0; r < tile_rows; ++r) {
          float* dst = y + (tile * kTileRows + r) * g.n + n0 + c0;
          for (int64_t c = 0; c < columns; ++c) dst[c] = out[c * kTileRows + r];
        }
      }
    }
  });
}

}  // namespace epctx::exec::kernels::nbits_detail

#endif  // defined(__AVX512VNNI__) && defined(__AVX512BW__)
