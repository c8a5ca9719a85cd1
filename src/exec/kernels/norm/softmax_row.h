// Softmax of one contiguous row, shared by Softmax and the fused MaskedSoftmax so that both give
// the same bits for the same row.
#pragma once

#include <cstdint>

#include "exec/kernels/common/eigen.h"

namespace epctx::exec::kernels {

// y = exp(x - max(x)) / sum(exp(x - max(x))) over n elements; y may be x.
inline void SoftmaxRow(const float* x, float* y, int64_t n) {
  ConstArrayMapF in(x, n);
  ArrayMapF out(y, n);
  const float max = in.maxCoeff();
  out = (in - max).exp();
  out *= 1.0f / out.sum();
}

}  // namespace epctx::exec::kernels
