// How many threads a kernel's loop should use: splitting small work costs more in thread
// start-up and joins than it saves.
#pragma once

#include <algorithm>
#include <cstdint>

namespace epctx::exec::kernels {

// Below this many elements of simple per-element work, a loop runs on one thread.
inline constexpr int64_t kMinParallelElements = int64_t{1} << 15;

// `available` threads (the context's count, at least 1) when `work` reaches `min_work`, else 1.
inline int ThreadsFor(int available, int64_t work, int64_t min_work = kMinParallelElements) {
  return work >= min_work ? std::max(available, 1) : 1;
}

}  // namespace epctx::exec::kernels
