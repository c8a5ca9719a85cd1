// LogSoftmax: y = x - max - log(sum(exp(x - max))) along the axis, with Softmax's opset-13 change
// of axis semantics (softmax_axis.h). float32 and float64.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "exec/kernels/common/eigen.h"
#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/norm/softmax_axis_kernel.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

template <typename T>
using ArrayMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using ConstArrayMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

template <typename T>
void LogSoftmaxRow(const T* x, T* y, int64_t n) {
  ConstArrayMap<T> in(x, n);
  ArrayMap<T> out(y, n);
  const T max = in.maxCoeff();
  out = in - max;
  const T log_sum = std::log(out.exp().sum());
  out -= log_sum;
}

// `len` rows of `inner` elements, normalized down the columns; `acc` holds `inner` values.
template <typename T>
void LogSoftmaxColumns(const T* x, T* y, int64_t len, int64_t inner, T* acc) {
  ArrayMap<T> a(acc, inner);
  a = ConstArrayMap<T>(x, inner);
  for (int64_t r = 1; r < len; ++r) a = a.max(ConstArrayMap<T>(x + r * inner, inner));
  for (int64_t r = 0; r < len; ++r) {
    ArrayMap<T>(y + r * inner, inner) = ConstArrayMap<T>(x + r * inner, inner) - a;
  }
  a.setZero();
  for (int64_t r = 0; r < len; ++r) a += ArrayMap<T>(y + r * inner, inner).exp();
  a = a.log();
  for (int64_t r = 0; r < len; ++r) ArrayMap<T>(y + r * inner, inner) -= a;
}

template <typename T>
void LogSoftmax(const AxisSplit& s, const T* x, T* y, int threads) {
  const int nt = ThreadsFor(threads, s.outer * s.len * s.inner);
  ParallelForRanges(nt, s.outer, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> acc(s.inner > 1 ? static_cast<size_t>(s.inner) : 0);
    for (int64_t o = begin; o < end; ++o) {
      const int64_t offset = o * s.len * s.inner;
      if (s.inner == 1) {
        LogSoftmaxRow(x + offset, y + offset, s.len);
      } else {
        LogSoftmaxColumns(x + offset, y + offset, s.len, s.inner, acc.data());
      }
    }
  });
}

struct LogSoftmaxOp {
  template <typename T>
  static void Compute(const AxisSplit& s, const T* x, T* y, int threads) {
    LogSoftmax(s, x, y, threads);
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateLogSoftmax(const NodeInfo& node) {
  return CreateSoftmaxAxisKernel<LogSoftmaxOp>(node);
}

}  // namespace epctx::exec::kernels
