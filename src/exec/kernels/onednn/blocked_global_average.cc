#include "exec/kernels/onednn/blocked_global_average.h"

#include <algorithm>

#include "exec/kernels/common/parallel_for.h"

namespace epctx::exec::kernels::onednn {
namespace {

template <int kLanes>
void AverageBlocks(const float* x, int64_t b0, int64_t b1, int64_t pixels, float* y) {
  for (int64_t b = b0; b < b1; ++b) {
    const float* in = x + b * pixels * kLanes;
    float sum[kLanes] = {};
    for (int64_t p = 0; p < pixels; ++p) {
      for (int l = 0; l < kLanes; ++l) sum[l] += in[p * kLanes + l];
    }
    for (int l = 0; l < kLanes; ++l) y[b * kLanes + l] = sum[l] / static_cast<float>(pixels);
  }
}

}  // namespace

void BlockedGlobalAverage(const float* x, int64_t blocks, int64_t pixels, int64_t lanes, float* y,
                          int threads) {
  if (blocks <= 0 || pixels <= 0) return;
  // Ranges of blocks of at least 64K floats read each, so that small inputs stay on one thread.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / (pixels * lanes));
  ParallelForRanges(threads, blocks, grain, [&](int64_t b0, int64_t b1) {
    if (lanes == 16) {
      AverageBlocks<16>(x, b0, b1, pixels, y);
    } else {
      AverageBlocks<8>(x, b0, b1, pixels, y);
    }
  });
}

}  // namespace epctx::exec::kernels::onednn
