// One activation row times a weight packed in oneDNN's blocked matmul layout (a decode step's
// products): oneDNN's matmul takes one row as it takes many, through its primitive, at 15-19 GB/s
// of weights on a Zen 4 core; this reads the same bytes as one prefetched stream per thread.
// Only the two layouts oneDNN packs [K, N] matmul weights in on AVX-512 are read (float32
// "BA16a64b", bfloat16 "BA16a64b2a": blocks of 64 columns outermost, each [K padded to 16 or 32]
// [64], bfloat16 in pairs of rows), and float16 in float32's layout, which the compiler stores
// for a float16 model's weights (oneDNN has no float16 matmul on these CPUs: the products are
// float32's, the weight's bytes half); anything else keeps oneDNN's primitive. Without AVX-512
// (AVX2, F16C and FMA): the float16 layout, which the compiler stores a float16 model's weights
// in there too, and float32 weights in the 1x1 convolution's 8-column panels (panel_matmul.h),
// which the compiler stores them in there, or, where panels would pad a weight by more than a
// quarter, in oneDNN's own layout there, plain [K, N] rows. Panels are read 8 at a time, their
// sums kept in registers: a SmolLM-shaped decode step at past 128 (Zen 3, 3 alternating rounds)
// took 32.2-32.8 ms over panels against 36.2-40.7 over rows at 1 thread, 20.4-21.3 against
// 24.4-26.0 at 2. Rows are read here not for speed (on a Zen 3 core oneDNN's one-row product
// and ours both read 13-18 GB/s) but because oneDNN's one-row product is its GEMM's, whose code
// it makes at the process's first product, 8-20 ms that a CNN's first run paid in its
// classifier (ResNet-50's first run at 1 thread, median of 5 processes: 137.5 -> 114.2 ms).
#pragma once

#include <cstdint>
#include <span>

namespace epctx::exec::kernels::onednn {

enum class GemvLayout {
  kNone,            // not read here
  kFloat32Blocked,  // [N / 64][K padded to 16][64] float32
  kBf16Blocked,     // [N / 64][K padded to 32 / 2][64][2] bfloat16
  kFloat16Blocked,  // [N / 64][K padded to 16][64] float16, multiplied in float32
  kFloat32Rows,     // [K][N] float32, plain rows (AVX2 builds, where oneDNN keeps them so)
  kFloat32Panels,   // [N / 8][K padded to 8][8] float32: the 1x1 convolution's (panel_matmul.h)
};

// The layout of an encoded weight format (weight_format.h) of a [k, n] weight, when this file
// reads it and the build has the instructions for it; kNone otherwise. `row_stride`, when given,
// receives the floats from one row to the next of kFloat32Rows (n or more), n otherwise.
GemvLayout GemvLayoutOf(std::span<const int64_t> format, int64_t k, int64_t n,
                        int64_t* row_stride = nullptr);

// The bytes a weight of `layout` takes (kFloat32Rows: rows `row_stride` floats apart, at least n).
int64_t GemvWeightBytes(GemvLayout layout, int64_t k, int64_t n, int64_t row_stride = 0);

// y [n] = x [k] times W (+ bias [n]) on up to `threads` threads; `row_stride` as GemvLayoutOf
// gives it (read by kFloat32Rows only). For kBf16Blocked, x is rounded to bfloat16 (to nearest
// even, as oneDNN's reorder does for the matmul) and the products are summed in float32.
void BlockedGemv(GemvLayout layout, const void* w, int64_t k, int64_t n, int64_t row_stride,
                 const float* x, const float* bias, float* y, int threads);

// `count` float16 values widened (exactly) to float32: a run of a kFloat16Blocked weight's column
// blocks becomes the same blocks in kFloat32Blocked.
void WidenFloat16(const uint16_t* from, int64_t count, float* to);

}  // namespace epctx::exec::kernels::onednn
