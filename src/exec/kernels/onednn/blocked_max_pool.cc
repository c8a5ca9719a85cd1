#include "exec/kernels/onednn/blocked_max_pool.h"

#include <algorithm>

#include "exec/kernels/common/parallel_for.h"

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace epctx::exec::kernels::onednn {
namespace {

constexpr int64_t kLanes = 8;

// The first and one-past-last input index a window starting at `start` covers.
void Clip(int64_t start, int64_t size, int64_t in, int64_t* first, int64_t* last) {
  *first = std::max<int64_t>(start, 0);
  *last = std::min(start + size, in);
}

// The maximum of one output's window: rows [h0, h1), columns [w0, w1) of a block.
void WindowMax(const float* block, int64_t in_w, int64_t h0, int64_t h1, int64_t w0, int64_t w1,
               float* out) {
#if defined(__AVX__)
  __m256 acc = _mm256_loadu_ps(block + (h0 * in_w + w0) * kLanes);
  for (int64_t h = h0; h < h1; ++h) {
    for (int64_t x = w0; x < w1; ++x) {
      acc = _mm256_max_ps(acc, _mm256_loadu_ps(block + (h * in_w + x) * kLanes));
    }
  }
  _mm256_storeu_ps(out, acc);
#else
  float acc[kLanes];
  std::copy_n(block + (h0 * in_w + w0) * kLanes, kLanes, acc);
  for (int64_t h = h0; h < h1; ++h) {
    for (int64_t x = w0; x < w1; ++x) {
      const float* v = block + (h * in_w + x) * kLanes;
      for (int64_t c = 0; c < kLanes; ++c) acc[c] = std::max(acc[c], v[c]);
    }
  }
  std::copy_n(acc, kLanes, out);
#endif
}

}  // namespace

bool EveryWindowHoldsInput(const BlockedPoolWindow& w) {
  if (w.blocks < 1 || w.in_h < 1 || w.in_w < 1 || w.out_h < 1 || w.out_w < 1 || w.kernel_h < 1 ||
      w.kernel_w < 1 || w.stride_h < 1 || w.stride_w < 1 || w.pad_top < 0 || w.pad_left < 0) {
    return false;
  }
  // The first window ends past the padding, the last starts before the input's end.
  return w.kernel_h > w.pad_top && w.kernel_w > w.pad_left &&
         (w.out_h - 1) * w.stride_h - w.pad_top < w.in_h &&
         (w.out_w - 1) * w.stride_w - w.pad_left < w.in_w;
}

void BlockedMaxPool8(const BlockedPoolWindow& w, const float* x, float* y, int threads) {
  const int64_t in_block = w.in_h * w.in_w * kLanes;
  const int64_t out_block = w.out_h * w.out_w * kLanes;
  // One task per output row of a block.
  ParallelFor(threads, w.blocks * w.out_h, [&](int64_t task, int) {
    const int64_t b = task / w.out_h, oh = task % w.out_h;
    int64_t h0 = 0, h1 = 0;
    Clip(oh * w.stride_h - w.pad_top, w.kernel_h, w.in_h, &h0, &h1);
    const float* block = x + b * in_block;
    float* out = y + b * out_block + oh * w.out_w * kLanes;
    for (int64_t ow = 0; ow < w.out_w; ++ow) {
      int64_t w0 = 0, w1 = 0;
      Clip(ow * w.stride_w - w.pad_left, w.kernel_w, w.in_w, &w0, &w1);
      WindowMax(block, w.in_w, h0, h1, w0, w1, out + ow * kLanes);
    }
  });
}

}  // namespace epctx::exec::kernels::onednn
