// Small float32 matrix products of activations (attention's Q·Kᵀ and P·V per head) on AVX2, by
// our own code: oneDNN 2.6 computes them there with its GEMM, whose code it makes at the
// process's first product (17-27 ms of one thread on a Zen 3 core), which a BERT-style model's
// first run waited for after every float32 weight product had moved to the 1x1 convolution
// (panel_matmul.h).
#pragma once

#include <cstdint>

namespace epctx::exec::kernels::onednn {

// One operand of a product: element (row, column) at data[row * row_stride + column * col_stride].
struct StridedMatrix {
  const float* data = nullptr;
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};

// Whether this build and CPU tier compute such products here: AVX2 and FMA, the AVX2 tier (on
// AVX-512 oneDNN's matmuls make no process-wide code).
bool SmallBatchGemmAvailable();
// Whether a product of [m, k] x [k, n] is small enough for it: at most kSmallBatchGemmMacs
// multiply-adds.
inline constexpr int64_t kSmallBatchGemmMacs = int64_t{4} << 20;
bool IsSmallBatchProduct(int64_t m, int64_t k, int64_t n);

// y = a x b for one [m, k] x [k, n] product, y's element (row, column) at
// y[row * y_row_stride + column * y_col_stride]; each element's products summed in k order.
// `pack` holds k * ((n + 15) / 16 * 16) floats (b copied into rows of 16-column groups).
void SmallGemm(StridedMatrix a, StridedMatrix b, float* y, int64_t y_row_stride,
               int64_t y_col_stride, int64_t m, int64_t k, int64_t n, float* pack);

// The floats SmallGemm's `pack` needs.
int64_t SmallGemmPackFloats(int64_t k, int64_t n);

}  // namespace epctx::exec::kernels::onednn
