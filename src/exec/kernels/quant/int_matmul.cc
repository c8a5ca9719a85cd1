#include "exec/kernels/quant/int_matmul.h"

#include <algorithm>

#include "exec/kernels/common/broadcast.h"
#include "exec/kernels/common/eigen.h"
#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/quant/s16_gemm_4x16_avx2.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

using RowMajorMatrixI = Eigen::Matrix<int32_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Element offsets of every matrix of `shape` (batch dims then 2 matrix dims) as seen through
// the broadcast batch dims `batch`.
Result<std::vector<int64_t>> BatchOffsets(const std::vector<int64_t>& shape,
                                          const std::vector<int64_t>& batch) {
  const size_t own = shape.size() - 2;
  std::vector<int64_t> strides(batch.size(), 0);
  EPCTX_ASSIGN_OR_RETURN(int64_t stride, CheckedDimProduct(shape, own, own + 2));
  for (size_t i = 0; i < own; ++i) {
    const size_t d = own - 1 - i;
    const size_t bd = batch.size() - 1 - i;
    strides[bd] = shape[d] == 1 ? 0 : stride;
    EPCTX_ASSIGN_OR_RETURN(stride, CheckedDimProduct(shape, d, shape.size()));
  }
  EPCTX_ASSIGN_OR_RETURN(const int64_t count, CheckedDimProduct(batch));
  std::vector<int64_t> offsets(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, offset = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      offset += (rest % batch[d]) * strides[d];
      rest /= batch[d];
    }
    offsets[static_cast<size_t>(i)] = offset;
  }
  return offsets;
}

}  // namespace

Result<IntMatMulPlan> PlanIntMatMul(const std::vector<int64_t>& a_shape,
                                    const std::vector<int64_t>& b_shape) {
  if (a_shape.empty() || b_shape.empty()) {
    return EPCTX_ERROR(kInvalidArgument, "MatMul operands must have rank >= 1, got {} and {}",
                       ShapeToString(a_shape), ShapeToString(b_shape));
  }
  std::vector<int64_t> a = a_shape, b = b_shape;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  IntMatMulPlan p;
  p.m = a[a.size() - 2];
  p.k = a[a.size() - 1];
  p.n = b[b.size() - 1];
  if (b[b.size() - 2] != p.k) {
    return EPCTX_ERROR(kInvalidArgument, "MatMul operands {} and {} have different inner dims",
                       ShapeToString(a_shape), ShapeToString(b_shape));
  }
  EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> batch,
                         BroadcastShapes(std::span<const int64_t>(a.data(), a.size() - 2),
                                         std::span<const int64_t>(b.data(), b.size() - 2)));
  EPCTX_ASSIGN_OR_RETURN(p.a_offsets, BatchOffsets(a, batch));
  EPCTX_ASSIGN_OR_RETURN(p.b_offsets, BatchOffsets(b, batch));
  p.out_shape = batch;
  if (a_shape.size() > 1) p.out_shape.push_back(p.m);
  if (b_shape.size() > 1) p.out_shape.push_back(p.n);
  return p;
}

void IntGemm(int64_t m, int64_t n, int64_t k, const int32_t* a, const int32_t* b, int32_t* c) {
  Eigen::Map<RowMajorMatrixI> out(c, m, n);
  if (k == 0) {
    out.setZero();
    return;
  }
  out.noalias() =
      Eigen::Map<const RowMajorMatrixI>(a, m, k) * Eigen::Map<const RowMajorMatrixI>(b, k, n);
}

void Int8Gemm(int64_t m, int64_t n, int64_t k, const int32_t* a, const int32_t* b, int32_t* c,
              int threads) {
#ifdef __AVX2__
  s16_gemm_4x16_avx2(m, n, k, a, b, c, threads);
#else
  (void)threads;
  IntGemm(m, n, k, a, b, c);
#endif
}

void IntMatMul(const IntMatMulPlan& p, const int32_t* a, const int32_t* b, int32_t* y,
               int threads) {
  const int64_t batches = static_cast<int64_t>(p.a_offsets.size());
  const int nt = ThreadsFor(threads, batches * p.m * p.n * p.k, int64_t{1} << 18);
  if (batches == 1 || nt == 1) {
    for (int64_t i = 0; i < batches; ++i) {
      Int8Gemm(p.m, p.n, p.k, a + p.a_offsets[static_cast<size_t>(i)],
               b + p.b_offsets[static_cast<size_t>(i)], y + i * p.m * p.n, nt);
    }
    return;
  }
  ParallelFor(nt, batches, [&](int64_t i, int) {
    Int8Gemm(p.m, p.n, p.k, a + p.a_offsets[static_cast<size_t>(i)],
             b + p.b_offsets[static_cast<size_t>(i)], y + i * p.m * p.n, 1);
  });
}

}  // namespace epctx::exec::kernels
