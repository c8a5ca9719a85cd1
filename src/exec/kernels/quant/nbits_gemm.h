// Products of float activations and weight-only quantized weights (int4/int8 in blocks along K,
// packed as nbits_layout.h describes): y [m, n] = a [m, k] x dequantize(W)^T (+ bias).
//
// Two arithmetics, chosen as ONNX Runtime chooses them from the operator's accuracy_level:
//  - float (levels 0-3): each block's weights are dequantized in registers, (code - zero point)
//    * scale, and multiplied with the float activations;
//  - int8 (level 4): each block of an activation row is quantized to int8 first, as ORT's MLAS
//    does (scale = max|a| / 127, codes rounded to nearest even), and a block's product is an
//    integer dot product scaled by both scales: y = sum over blocks of sa * sb * (sum qa * code
//    - zero point * sum qa). It reads the weights once per 4 activation rows and does a quarter
//    of the float path's instructions per weight.
#pragma once

#include <cstdint>
#include <vector>

#include "epctx/status.h"

#include "exec/kernels/quant/nbits_layout.h"

namespace epctx::exec::kernels {

struct NBitsWeights {
  NBitsGeometry g;
  const uint8_t* codes = nullptr;            // packed, g.code_bytes() bytes
  const float* scales = nullptr;             // [n, blocks]
  const int8_t* zero_points = nullptr;       // [n, blocks], packed int8; or
  const float* float_zero_points = nullptr;  // [n, blocks]; neither: the implied zero point
  const float* bias = nullptr;               // [n] or null
};

// y [m, n] (row-major) = a [m, k] (row-major) x W^T (+ bias), on up to `threads` threads.
// Few rows (decode) take the column products below, which read each weight once from the
// quantized bytes. Many rows (a prompt) at accuracy_level 4 with 4-bit weights take the integer
// products of AVX-512 VNNI or AVX2 (Int8PanelMatMul); other prompts dequantize the weights a
// chunk of columns at a time and multiply with oneDNN's float32 matmul (chunked_weight_gemm.h);
// at accuracy_level 4 (8-bit weights, float zero points, builds without AVX2) the activations
// are first rounded to their int8 grid (the codes times the block scale, as floats), so the
// result is the int8 arithmetic's up to float rounding. Fails only when oneDNN cannot make that
// matmul.
Status NBitsMatMul(const NBitsWeights& w, const float* a, int64_t m, float* y,
                   bool int8_activations, int threads);

namespace nbits_detail {

// One activation row quantized per block (int8 path): codes [blocks * block_size] (the tail of
// the last block zero), scales [blocks], and scale * sum of codes per block [blocks].
struct QuantizedRows {
  int64_t rows = 0;
  int64_t row_codes = 0;  // blocks * block_size
  int8_t* codes = nullptr;
  float* scales = nullptr;
  float* scaled_sums = nullptr;
  // For 4-bit weights with the implied zero point 8 and blocks of 32 or more: per block, 8 times
  // the sums of codes 4l..4l+3 of each group of 32 (lane l of an 8-lane integer dot product), so
  // that the zero point comes off the integer sums lane by lane. [rows, blocks, 8]; else null.
  int32_t* zero_lanes = nullptr;
};

// Row `row` of `q` laid out for the one-row int8 kernels, which take `blocks_per_group` blocks of
// 32 codes per step (VNNI 4, AVX2 2): per group, codes 0-15 of each of its blocks, then codes
// 16-31 of each, so that one load of the group's packed weight codes, split into low and high
// nibbles, meets them; each block's result lands in 4 lanes. Blocks past the last are zero.
struct RowBlockGroups {
  int64_t blocks_per_group = 0;
  int64_t groups = 0;           // ceil(blocks / blocks_per_group)
  std::vector<int8_t> codes;    // [groups][blocks_per_group * 32]
  std::vector<float> scales;    // [groups][blocks_per_group * 4]: each lane's block's scale
  std::vector<int32_t> starts;  // [groups][blocks_per_group * 4]: -8 x the lane's 8 codes' sum
                                // when the zero point is the implied 8, else 0
};
RowBlockGroups GroupRowBlocks(const NBitsGeometry& g, const QuantizedRows& q, int64_t row,
                              int64_t blocks_per_group, bool implied_zero);

// Quantizes rows [begin, end) of a [m, k] into `q`.
void QuantizeRows(const NBitsGeometry& g, const float* a, int64_t begin, int64_t end,
                  const QuantizedRows& q);

// y[r * ldy + n] for rows r in [0, rows) (rows <= 4) and columns n in [begin, end). The AVX2
// versions when the build targets AVX2, portable ones otherwise.
void DotColumnsInt8(const NBitsWeights& w, const QuantizedRows& q, int64_t row0, int rows,
                    int64_t begin, int64_t end, float* y, int64_t ldy);
void DotColumnsFloat(const NBitsWeights& w, const float* a, int64_t lda, const float* block_sums,
                     int rows, int64_t begin, int64_t end, float* y, int64_t ldy);

// Rows [begin, end) of a [m, k], each block rounded to its int8 grid (code * scale, as the int8
// path quantizes them), into out [m, k].
void RoundRowsToInt8Grid(const NBitsGeometry& g, const float* a, int64_t begin, int64_t end,
                         float* out);

// Column n's weights dequantized, (code - zero point) * scale, into out [k].
void DequantizeColumn(const NBitsWeights& w, int64_t n, float* out);

// The int8 arithmetic's own kernels, for 4-bit weights with integer or implied zero points. Built
// for CPUs with AVX-512 VNNI (nbits_gemm_vnni.cc) and for other AVX2 CPUs (nbits_panels_avx2.cc,
// nbits_gemv_int8_avx2.cc); kHasInt8Kernels says whether the build has them.
#if defined(__AVX2__)
inline constexpr bool kHasInt8Kernels = true;
#else
inline constexpr bool kHasInt8Kernels = false;
#endif
// Many rows: y [m, n] from the rows quantized in `q` (Int8PanelsApply: any block size).
bool Int8PanelsApply(const NBitsWeights& w);
void Int8PanelMatMul(const NBitsWeights& w, const QuantizedRows& q, int64_t m, float* y,
                     int threads);
// The columns of a panel of the int8 arithmetic: up to max_width, a multiple of step, chosen so
// that the threads get as even a share of the n columns as can be (576 columns on 2 threads in
// panels of up to 64: 12 panels of 48, not 9 of 64, of which one thread would take 5).
int64_t PanelWidth(int64_t n, int threads, int64_t max_width, int64_t step);
// One row (a decode step): row `row` of `q` into y [n] on up to `threads` threads
// (Int8DecodeStepApplies: blocks of 32).
bool Int8DecodeStepApplies(const NBitsWeights& w);
void Int8DecodeStep(const NBitsWeights& w, const QuantizedRows& q, int64_t row, float* y,
                    int threads);

// The float arithmetic for one row (a decode step at accuracy_level 0-3) on AVX-512
// (nbits_gemv_float_avx512.cc): y [n] from a [blocks * 32] (zero past k) and its block sums, for
// 4-bit weights in blocks of 32 with any zero points (FloatOneRowAvx512Applies). Built only for
// CPUs with AVX-512 BW (kHasFloatOneRowAvx512).
#if defined(__AVX512F__) && defined(__AVX512BW__)
inline constexpr bool kHasFloatOneRowAvx512 = true;
#else
inline constexpr bool kHasFloatOneRowAvx512 = false;
#endif
bool FloatOneRowAvx512Applies(const NBitsWeights& w);
void FloatOneRowAvx512(const NBitsWeights& w, const float* a, const float* block_sums, float* y,
                       int threads);

// The zero point of block b of column n, as a float in the packed layout's terms.
inline float ZeroPointOf(const NBitsWeights& w, int64_t n, int64_t b) {
  const int64_t i = n * w.g.blocks + b;
  if (w.zero_points != nullptr) return static_cast<float>(w.zero_points[i]);
  if (w.float_zero_points != nullptr) return w.float_zero_points[i];
  return static_cast<float>(w.g.implied_zero_point());
}

}  // namespace nbits_detail

}  // namespace epctx::exec::kernels
