// The one place kernels split loops over threads: every parallel loop of the kernel families
// goes through these two functions, run on the worker pool (worker_pool.h explains why not
// OpenMP).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "exec/kernels/common/worker_pool.h"

namespace epctx::exec::kernels {

// Calls fn(i, worker) for every i in [0, count) on up to `threads` threads, the caller
// included; `worker` in [0, threads) tells the threads of this call apart (for per-thread
// scratch). Indices are handed out one at a time, so a thread the OS deschedules holds back at
// most one of them while the others carry on.
template <typename Fn>
void ParallelFor(int threads, int64_t count, Fn&& fn) {
  const int nt = static_cast<int>(std::min<int64_t>(std::max(threads, 1), count));
  if (nt <= 1) {
    for (int64_t i = 0; i < count; ++i) fn(i, 0);
    return;
  }
  auto loop = std::make_shared<ParallelLoop>();
  loop->count = count;
  loop->max_workers = nt;
  loop->body = const_cast<void*>(static_cast<const void*>(&fn));
  loop->call = [](void* body, int64_t i, int worker) {
    (*static_cast<std::remove_reference_t<Fn>*>(body))(i, worker);
  };
  RequestHelpers(loop, nt - 1);
  loop->Work(0);
  WaitForLoop(*loop);
}

// Splits [0, count) into contiguous ranges of at least `grain` (a few per thread) and calls
// fn(begin, end) on each, over up to `threads` threads.
template <typename Fn>
void ParallelForRanges(int threads, int64_t count, int64_t grain, Fn&& fn) {
  constexpr int64_t kRangesPerThread = 4;
  if (count <= 0) return;
  const int64_t ranges = std::clamp<int64_t>(count / std::max<int64_t>(grain, 1), 1,
                                             kRangesPerThread * std::max(threads, 1));
  if (ranges == 1 || threads <= 1) {
    fn(int64_t{0}, count);
    return;
  }
  ParallelFor(threads, ranges,
              [&](int64_t r, int) { fn(count * r / ranges, count * (r + 1) / ranges); });
}

}  // namespace epctx::exec::kernels
