// A float32 map y[i] = f(x[i]) split over threads: the shared body of Relu, Sigmoid and Clip.
#pragma once

#include <algorithm>
#include <cstdint>

#include <omp.h>

#include "exec/kernels/common/threads.h"

namespace epctx::exec::kernels {

// fn(x, y, n) transforms one contiguous chunk.
template <typename ChunkFn>
void ParallelMap(const float* x, float* y, int64_t n, int threads, ChunkFn&& fn) {
  const int nt = ThreadsFor(threads, n);
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    const int64_t t = omp_get_thread_num();
    const int64_t count = omp_get_num_threads();
    // Chunk borders on 16-float boundaries keep every thread's stores on whole cache lines.
    const int64_t blocks = (n + 15) / 16;
    const int64_t begin = std::min(n, blocks * t / count * 16);
    const int64_t end = std::min(n, blocks * (t + 1) / count * 16);
    if (end > begin) fn(x + begin, y + begin, end - begin);
  }
}

}  // namespace epctx::exec::kernels
