// The one way kernels include Eigen. Kernels split work over threads themselves (ParallelFor: the
// session's thread count is per call, Eigen's is process-wide), so Eigen's own parallelization
// is turned off in every file that uses it; mixing both would oversubscribe.
#pragma once

#ifndef EIGEN_DONT_PARALLELIZE
#define EIGEN_DONT_PARALLELIZE
#endif
// GCC 12 warns inside Eigen's AVX-512 code: a deliberately undefined _mm512_undefined_ps()
// operand, and unused temporaries. Both are Eigen's and harmless; CMake usually includes Eigen
// as a system header, which hides them too, but not every build does.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wunused-variable"
#include <Eigen/Core>
#pragma GCC diagnostic pop

namespace epctx::exec::kernels {

using RowMajorMatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMapF = Eigen::Map<const RowMajorMatrixF, Eigen::Unaligned, Eigen::OuterStride<>>;
using MatrixMapF = Eigen::Map<RowMajorMatrixF, Eigen::Unaligned, Eigen::OuterStride<>>;
using ConstArrayMapF = Eigen::Map<const Eigen::ArrayXf>;
using ArrayMapF = Eigen::Map<Eigen::ArrayXf>;

}  // namespace epctx::exec::kernels
