// A weight read once per call, as a stream from memory (the one-row products of a decode step,
// whose weights do not stay in the caches between tokens): how far ahead it is prefetched, the
// prefetch itself, and its split over threads.
#pragma once

#include <algorithm>
#include <cstdint>

#include "exec/kernels/common/parallel_for.h"

namespace epctx::exec::kernels {

// The bytes the memory delivers while a load waits for it (~100 ns at ~20-30 GB/s).
inline constexpr int64_t kStreamPrefetchBytes = 4096;

// Non-temporal: a token's weights would otherwise push the activations and the executor's own
// data out of the caches. always_inline: GCC 12 inlines a plain inline function in the int4
// decode loop but drops its prefetch (the loop then read 11-13 GB/s instead of 15-22).
__attribute__((always_inline)) inline void PrefetchStream(const void* p) {
  __builtin_prefetch(p, 0, 0);
}

// The first `ahead` bytes of the stream [begin, end): a loop that prefetches `ahead` bytes
// before what it reads never asks for them.
inline void PrefetchStreamStart(const void* begin, const void* end, int64_t ahead) {
  const char* first = static_cast<const char*>(begin);
  const char* last = std::min(static_cast<const char*>(end), first + ahead);
  for (const char* p = first; p < last; p += 64) PrefetchStream(p);
}

// Streams below this many bytes take one thread: splitting them costs more than the second
// thread's bandwidth brings (a SmolLM-shaped int4 k_proj, 69 KB: 4.4 us on one thread, 6.2 on
// two).
inline constexpr int64_t kOneThreadStreamBytes = 128 << 10;

// Calls fn(begin, end) on one even, contiguous share of [0, units) per thread (each one stream
// the prefetches keep ahead of), on up to `threads` threads; `bytes` the stream's size.
template <typename Fn>
void SplitStream(int64_t units, int64_t bytes, int threads, Fn&& fn) {
  const int workers =
      bytes < kOneThreadStreamBytes
          ? 1
          : static_cast<int>(std::min<int64_t>(std::max(threads, 1), std::max<int64_t>(units, 1)));
  ParallelFor(workers, workers,
              [&](int64_t part, int) { fn(units * part / workers, units * (part + 1) / workers); });
}

}  // namespace epctx::exec::kernels
