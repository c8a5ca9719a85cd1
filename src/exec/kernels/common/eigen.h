// The one way kernels include Eigen. Kernels split work over OpenMP threads themselves (the
// session's thread count is per call, Eigen's is process-wide), so Eigen's own OpenMP
// parallelization is turned off in every file that uses it; mixing both would oversubscribe.
#pragma once

#ifndef EIGEN_DONT_PARALLELIZE
#define EIGEN_DONT_PARALLELIZE
#endif
// GCC 12 reports Eigen's AVX-512 transposes as reading an uninitialized value: the value is
// _mm512_undefined_ps(), deliberately undefined. The diagnostic is a false positive.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>
#pragma GCC diagnostic pop

namespace epctx::exec::kernels {

using RowMajorMatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMapF = Eigen::Map<const RowMajorMatrixF, Eigen::Unaligned, Eigen::OuterStride<>>;
using MatrixMapF = Eigen::Map<RowMajorMatrixF, Eigen::Unaligned, Eigen::OuterStride<>>;
using ConstArrayMapF = Eigen::Map<const Eigen::ArrayXf>;
using ArrayMapF = Eigen::Map<Eigen::ArrayXf>;

}  // namespace epctx::exec::kernels
