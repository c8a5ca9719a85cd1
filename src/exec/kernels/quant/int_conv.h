// Integer convolution for ConvInteger and QLinearConv: int32 accumulation over operands already
// widened with their zero points subtracted (so padding contributes 0), by im2col + int32 GEMM.
#pragma once

#include <cstdint>

#include "exec/kernels/nn/conv_shape.h"

namespace epctx::exec::kernels {

// y [N, M, out...] = conv(x [N, C, in...], w [M, C/group, kernel...]) in int32, every value of x
// and w an 8-bit value minus its zero point (within [-255, 255]; Int8Gemm).
void IntConv(const ConvShape& p, const int32_t* x, const int32_t* w, int32_t* y, int threads);

}  // namespace epctx::exec::kernels
