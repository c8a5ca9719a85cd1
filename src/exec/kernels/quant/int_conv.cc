#include "exec/kernels/quant/int_conv.h"

#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/nn/im2col.h"
#include "exec/kernels/quant/int_matmul.h"

namespace epctx::exec::kernels {

void IntConv(const ConvShape& p, const int32_t* x, const int32_t* w, int32_t* y, int threads) {
  const Window3d& win = p.window;
  const int64_t cg = p.in_channels / p.group;
  const int64_t mg = p.out_channels / p.group;
  const int64_t k = cg * win.kernel_size();
  const int64_t positions = win.out_size();
  const int64_t tasks = p.batch * p.group;
  const int nt = ThreadsFor(threads, tasks * mg * k * positions, int64_t{1} << 18);
  ParallelForRanges(nt, tasks, 1, [&](int64_t begin, int64_t end) {
    std::vector<int32_t> col(static_cast<size_t>(k * positions));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t n = task / p.group, g = task % p.group;
      Im2Col(x + (n * p.in_channels + g * cg) * win.in_size(), win, 0, k, 0, positions, col.data(),
             positions);
      Int8Gemm(mg, positions, k, w + g * mg * k, col.data(),
               y + (n * p.out_channels + g * mg) * positions, tasks == 1 ? nt : 1);
    }
  });
}

}  // namespace epctx::exec::kernels
