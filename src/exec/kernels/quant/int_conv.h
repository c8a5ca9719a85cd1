// Integer convolution for ConvInteger and QLinearConv: int32 accumulation over operands already
// widened with their zero points subtracted (so padding contributes 0), by im2col + int32 GEMM.
#pragma once

#include <cstdint>
#include <vector>

#include "epctx/status.h"
#include "exec/kernels/nn/window.h"

namespace epctx::exec::kernels {

struct IntConvProblem {
  int64_t batch = 0;
  int64_t in_channels = 0;   // C
  int64_t out_channels = 0;  // M
  int64_t group = 1;
  Window3d window;
  std::vector<int64_t> out_shape;  // [N, M, out spatial...]
};

// Checks x [N, C, spatial...] against w [M, C/group, kernel...] and resolves the window.
Result<IntConvProblem> DescribeIntConv(const WindowAttrs& attrs, int64_t group,
                                       const std::vector<int64_t>& x_shape,
                                       const std::vector<int64_t>& w_shape);

// y [N, M, out...] = conv(x [N, C, in...], w [M, C/group, kernel...]) in int32, every value of x
// and w an 8-bit value minus its zero point (within [-255, 255]; Int8Gemm).
void IntConv(const IntConvProblem& p, const int32_t* x, const int32_t* w, int32_t* y, int threads);

}  // namespace epctx::exec::kernels
