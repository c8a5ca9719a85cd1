// Batched int32 matrix products for MatMulInteger and QLinearMatMul: numpy MatMul shapes
// (1-D operands promoted and their unit dim dropped, batch dims broadcast) on operands already
// widened to int32 with their zero points subtracted.
#pragma once

#include <cstdint>
#include <vector>

#include "epctx/status.h"

namespace epctx::exec::kernels {

struct IntMatMulPlan {
  int64_t m = 0, k = 0, n = 0;
  std::vector<int64_t> out_shape;
  std::vector<int64_t> a_offsets;  // per output matrix: element offset of its A matrix
  std::vector<int64_t> b_offsets;
};

Result<IntMatMulPlan> PlanIntMatMul(const std::vector<int64_t>& a_shape,
                                    const std::vector<int64_t>& b_shape);

// y[batch][m, n] = a[batch] x b[batch] in int32, every value of a and b an 8-bit value minus its
// zero point (within [-255, 255]; Int8Gemm).
void IntMatMul(const IntMatMulPlan& plan, const int32_t* a, const int32_t* b, int32_t* y,
               int threads);

// c [m, n] = a [m, k] x b [k, n], row-major, int32.
void IntGemm(int64_t m, int64_t n, int64_t k, const int32_t* a, const int32_t* b, int32_t* c);

// IntGemm for operands within [-255, 255] (8-bit values minus zero points), exact: on AVX2 by
// s16_gemm_4x16_avx2 (pairs of products in int32), several times faster than Eigen's int32
// product; `threads` split the columns there.
void Int8Gemm(int64_t m, int64_t n, int64_t k, const int32_t* a, const int32_t* b, int32_t* c,
              int threads);

}  // namespace epctx::exec::kernels
