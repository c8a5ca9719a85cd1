// A float32 map y[i] = f(x[i]) split over threads: the shared body of Relu, Sigmoid and Clip.
#pragma once

#include <algorithm>
#include <cstdint>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/threads.h"

namespace epctx::exec::kernels {

// fn(x, y, n) transforms one contiguous chunk.
template <typename ChunkFn>
void ParallelMap(const float* x, float* y, int64_t n, int threads, ChunkFn&& fn) {
  // Ranges of whole 16-float blocks keep every thread's stores on whole cache lines.
  const int64_t blocks = (n + 15) / 16;
  ParallelForRanges(ThreadsFor(threads, n), blocks, kMinParallelElements / 8 / 16,
                    [&](int64_t first, int64_t last) {
                      const int64_t begin = first * 16;
                      const int64_t end = std::min(n, last * 16);
                      fn(x + begin, y + begin, end - begin);
                    });
}

}  // namespace epctx::exec::kernels
