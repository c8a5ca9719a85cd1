// Widening of the two 8-bit MatMul operands with their zero points: A's per tensor or per row
// (M values), B's per tensor or per column (N values).
#pragma once

#include <cstdint>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/kernels/quant/int_matmul.h"

namespace epctx::exec::kernels {

struct WidenedOperands {
  IntMatMulPlan plan;
  std::vector<int32_t> a, b;
};

Result<WidenedOperands> WidenMatMulOperands(const Tensor& a, const Tensor* a_zero_point,
                                            const Tensor& b, const Tensor* b_zero_point);

}  // namespace epctx::exec::kernels
