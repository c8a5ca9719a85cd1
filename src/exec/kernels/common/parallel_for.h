// The one place kernels split loops over threads: every parallel loop of the kernel families
// goes through these two functions. They run on OpenMP's threads because oneDNN, which runs the
// heavy kernels, is built on OpenMP: sharing its thread team keeps one thread budget per session.
// A second pool of our own would wait (spinning) beside OpenMP's idle threads for the same two
// cores. On a machine shared with other busy processes, OMP_WAIT_POLICY=passive in the
// environment stops OpenMP's idle threads from spinning (see docs/KERNELS.md, "Threads").
#pragma once

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace epctx::exec::kernels {

// Calls fn(i, worker) for every i in [0, count) on up to `threads` threads, the caller
// included; `worker` in [0, threads) tells the threads of this call apart (for per-thread
// scratch). Indices are handed out one at a time, so a thread the OS deschedules holds back at
// most one of them while the others carry on. Inside another parallel region it runs serially.
template <typename Fn>
void ParallelFor(int threads, int64_t count, Fn&& fn) {
  const int nt = static_cast<int>(std::min<int64_t>(std::max(threads, 1), count));
  if (nt <= 1 || omp_in_parallel()) {
    for (int64_t i = 0; i < count; ++i) fn(i, 0);
    return;
  }
  std::atomic<int64_t> next{0};
#pragma omp parallel num_threads(nt)
  {
    const int worker = omp_get_thread_num();
    for (int64_t i = next.fetch_add(1, std::memory_order_relaxed); i < count;
         i = next.fetch_add(1, std::memory_order_relaxed)) {
      fn(i, worker);
    }
  }
}

// Splits [0, count) into contiguous ranges of about `grain` or more (a few per thread) and calls
// fn(begin, end) on each, over up to `threads` threads. When there are more ranges than threads,
// their number is a multiple of the thread count (3 ranges on 2 threads would leave one thread
// with two of them: 2/3 of the work instead of 1/2).
template <typename Fn>
void ParallelForRanges(int threads, int64_t count, int64_t grain, Fn&& fn) {
  constexpr int64_t kRangesPerThread = 4;
  if (count <= 0) return;
  const int64_t nt = std::max(threads, 1);
  int64_t ranges =
      std::clamp<int64_t>(count / std::max<int64_t>(grain, 1), 1, kRangesPerThread * nt);
  if (ranges > nt) ranges = std::min(count, (ranges + nt - 1) / nt * nt);
  if (ranges == 1 || threads <= 1) {
    fn(int64_t{0}, count);
    return;
  }
  ParallelFor(threads, ranges,
              [&](int64_t r, int) { fn(count * r / ranges, count * (r + 1) / ranges); });
}

}  // namespace epctx::exec::kernels
