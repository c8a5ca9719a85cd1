// Hardmax: 1 at the first maximum along the axis, 0 elsewhere, with Softmax's opset-13 change of
// axis semantics (softmax_axis.h). float32 and float64.
#include <algorithm>
#include <memory>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/norm/softmax_axis_kernel.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

template <typename T>
void Hardmax(const AxisSplit& s, const T* x, T* y, int threads) {
  const int nt = ThreadsFor(threads, s.outer * s.len * s.inner);
  ParallelForRanges(nt, s.outer, 1, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const T* xb = x + o * s.len * s.inner;
      T* yb = y + o * s.len * s.inner;
      std::fill(yb, yb + s.len * s.inner, T{0});
      for (int64_t i = 0; i < s.inner; ++i) {
        int64_t best = 0;
        for (int64_t a = 1; a < s.len; ++a) {
          if (xb[a * s.inner + i] > xb[best * s.inner + i]) best = a;
        }
        yb[best * s.inner + i] = T{1};
      }
    }
  });
}

struct HardmaxOp {
  template <typename T>
  static void Compute(const AxisSplit& s, const T* x, T* y, int threads) {
    Hardmax(s, x, y, threads);
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateHardmax(const NodeInfo& node) {
  return CreateSoftmaxAxisKernel<HardmaxOp>(node);
}

}  // namespace epctx::exec::kernels
