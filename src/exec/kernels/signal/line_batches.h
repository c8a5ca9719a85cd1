// How DFT and STFT share out their independent lines (signal lines, frames): in batches of up
// to one vector register of lanes (kSignalVectorBytes), so the FFT's inner loops vectorise across
// lines, over the context's threads, each worker with its own slice of one scratch block taken on
// the calling thread (so a steady-state run allocates nothing).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "epctx/status.h"
#include "exec/kernels/common/scratch.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/signal/dft_plan.h"
#include "exec/kernels/signal/vector_width.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {

// Scratch one worker may use before batches shrink: about half an L2 cache.
inline constexpr size_t kLineBatchScratchBytes = size_t{512} << 10;

struct LineBatches {
  int64_t lanes = 1;  // lines per batch; the last batch may hold fewer
  int64_t batches = 0;
  int threads = 1;
  size_t per_worker = 0;  // elements of scratch per worker
};

// `buffer_per_lane`: elements the kernel itself needs per lane besides the plan's scratch.
template <typename T>
LineBatches PlanLineBatches(const DftPlan<T>& plan, int64_t lines, size_t buffer_per_lane,
                            int available_threads) {
  constexpr int64_t kMax = kMaxLanes<T>;
  LineBatches b;
  // A power of two (lane_transpose.h has kernels for those), as many as the budget allows.
  const size_t lane_bytes = (buffer_per_lane + plan.scratch_size(1)) * sizeof(T);
  const int64_t fit = static_cast<int64_t>(kLineBatchScratchBytes / lane_bytes);
  while (b.lanes * 2 <= std::min(fit, kMax)) b.lanes *= 2;
  b.threads = ThreadsFor(available_threads, lines * plan.size() * 8);
  // Smaller batches when there are too few to keep every thread busy to the end.
  while (b.lanes > kMax / 4 && (lines + b.lanes - 1) / b.lanes < 4 * b.threads) b.lanes /= 2;
  b.lanes = std::max<int64_t>(1, std::min(b.lanes, lines));
  b.batches = lines == 0 ? 0 : (lines + b.lanes - 1) / b.lanes;
  b.threads = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(b.threads, b.batches)));
  b.per_worker = buffer_per_lane * static_cast<size_t>(b.lanes) + plan.scratch_size(b.lanes);
  return b;
}

// The calling thread's scratch, as `b.threads` slices of b.per_worker elements of T.
template <typename T>
Result<T*> LineBatchScratch(const LineBatches& b) {
  static_assert(sizeof(T) % sizeof(float) == 0 && alignof(T) <= 64);
  constexpr size_t kFloats = sizeof(T) / sizeof(float);
  const size_t workers = static_cast<size_t>(b.threads);
  if (b.per_worker > SIZE_MAX / kFloats / workers) {
    return EPCTX_ERROR(kInvalidArgument, "FFT scratch of {} x {} elements overflows", workers,
                       b.per_worker);
  }
  EPCTX_ASSIGN_OR_RETURN(float* p, ThreadScratchF32(workers * b.per_worker * kFloats));
  return reinterpret_cast<T*>(p);
}

// One worker's slice of the scratch for a batch of `lanes` lines of `n` points: the loaded
// lines (real and, for complex input, imaginary parts), the spectrum, then the plan's work area.
// Sized by PlanLineBatches with buffer_per_lane = n * (complex_input ? 4 : 3).
template <typename T>
struct LaneBuffers {
  T* in_re;
  T* in_im;  // the spectrum's real part when the input is real (no imaginary part to load)
  T* out_re;
  T* out_im;
  T* work;
};

template <typename T>
LaneBuffers<T> LaneBuffersOf(T* scratch, const LineBatches& b, int worker, int64_t n, int64_t lanes,
                             bool complex_input) {
  LaneBuffers<T> l;
  l.in_re = scratch + static_cast<size_t>(worker) * b.per_worker;
  l.in_im = l.in_re + n * lanes;
  l.out_re = l.in_im + (complex_input ? n * lanes : 0);
  l.out_im = l.out_re + n * lanes;
  l.work = l.out_im + n * lanes;
  return l;
}

}  // namespace epctx::exec::kernels
