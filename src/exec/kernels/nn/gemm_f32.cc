#include "exec/kernels/nn/gemm_f32.h"

#include "exec/kernels/common/eigen.h"

namespace epctx::exec::kernels {
namespace {

// Logical operand as an Eigen expression: the stored matrix, or its transpose.
ConstMatrixMapF Stored(GemmOperand x, int64_t rows, int64_t cols) {
  return x.transposed ? ConstMatrixMapF(x.data, cols, rows, Eigen::OuterStride<>(x.ld))
                      : ConstMatrixMapF(x.data, rows, cols, Eigen::OuterStride<>(x.ld));
}

}  // namespace

void GemmF32(int64_t m, int64_t n, int64_t k, float alpha, GemmOperand a, GemmOperand b, float* c,
             int64_t ldc) {
  if (m == 0 || n == 0) return;
  MatrixMapF out(c, m, n, Eigen::OuterStride<>(ldc));
  if (k == 0) {
    out.setZero();
    return;
  }
  const ConstMatrixMapF sa = Stored(a, m, k);
  const ConstMatrixMapF sb = Stored(b, k, n);
  if (!a.transposed && !b.transposed) {
    out.noalias() = alpha * sa * sb;
  } else if (!a.transposed) {
    out.noalias() = alpha * sa * sb.transpose();
  } else if (!b.transposed) {
    out.noalias() = alpha * sa.transpose() * sb;
  } else {
    out.noalias() = alpha * sa.transpose() * sb.transpose();
  }
}

}  // namespace epctx::exec::kernels
