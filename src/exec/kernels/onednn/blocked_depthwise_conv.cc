#include "exec/kernels/onednn/blocked_depthwise_conv.h"

#include <algorithm>
#include <cstdint>

#include "exec/kernels/common/parallel_for.h"

#if defined(__AVX512F__)
#include "exec/kernels/onednn/blocked_avx512.h"
#endif

namespace epctx::exec::kernels::onednn {

#if defined(__AVX512F__)
namespace {

// Output pixels of a row computed together: 8 sums, 8 input vectors per weight vector.
constexpr int kDepthwiseTilePixels = 8;

// A vector of zeros that window columns outside the input read instead (adding zero times a
// weight leaves a sum as it is).
alignas(64) constexpr float kZeros[kChannelBlock] = {};

// One output row of one channel block of one image.
struct RowArgs {
  const BlockedDepthwiseProblem* p = nullptr;
  const float* x = nullptr;         // the block's input plane [in_h][in_w][16]
  const float* w = nullptr;         // the block's weights [kernel_h][kernel_w][16]
  const float* residual = nullptr;  // the output row [out_w][16], or null
  float* y = nullptr;               // the output row [out_w][16]
  __m512 init;                      // the bias (zeros past the channels)
  __mmask16 real = 0;               // lanes of real channels
  int64_t oh = 0;
  int64_t kh_begin = 0, kh_end = 0;  // window rows inside the input
  std::span<const PostOp> ops;
};

// Output pixels [ow, ow + kPixels) of a row, for a window kKernelW wide at stride kStrideW (the
// products' offsets constants). kInside: every window lies inside the input's columns;
// otherwise each column is checked, and those outside read kZeros.
template <int kKernelW, int kStrideW, int kPixels, bool kInside>
__attribute__((always_inline)) inline void Tile(const RowArgs& a, int64_t ow) {
  const BlockedDepthwiseProblem& p = *a.p;
  __m512 acc[kPixels];
  for (__m512& v : acc) v = a.init;
  const int64_t iw0 = ow * kStrideW - p.pad_left;
  for (int64_t kh = a.kh_begin; kh < a.kh_end; ++kh) {
    const float* row = a.x + (a.oh * p.stride_h - p.pad_top + kh) * p.in_w * kChannelBlock;
    const float* wr = a.w + kh * kKernelW * kChannelBlock;
    for (int kw = 0; kw < kKernelW; ++kw) {
      const __m512 wv = _mm512_loadu_ps(wr + kw * kChannelBlock);
      for (int t = 0; t < kPixels; ++t) {
        const float* src;
        if constexpr (kInside) {
          src = row + (iw0 + t * kStrideW + kw) * kChannelBlock;
        } else {
          const int64_t iw = iw0 + t * kStrideW + kw;
          src = static_cast<uint64_t>(iw) < static_cast<uint64_t>(p.in_w) ? row + iw * kChannelBlock
                                                                          : kZeros;
        }
        acc[t] = _mm512_fmadd_ps(_mm512_loadu_ps(src), wv, acc[t]);
      }
    }
  }
  ApplyPlainPostOps<kPixels>(
      a.ops, a.residual == nullptr ? nullptr : a.residual + ow * kChannelBlock, acc);
  for (int t = 0; t < kPixels; ++t) {
    _mm512_storeu_ps(a.y + (ow + t) * kChannelBlock, _mm512_maskz_mov_ps(a.real, acc[t]));
  }
}

// A tile of `count` (<= kPixels) pixels.
template <int kKernelW, int kStrideW, int kPixels, bool kInside>
void TileOf(const RowArgs& a, int64_t ow, int count) {
  if constexpr (kPixels > 0) {
    if (count == kPixels) return Tile<kKernelW, kStrideW, kPixels, kInside>(a, ow);
    return TileOf<kKernelW, kStrideW, kPixels - 1, kInside>(a, ow, count);
  }
}

template <int kKernelW, int kStrideW>
void Row(const RowArgs& a) {
  const BlockedDepthwiseProblem& p = *a.p;
  // Columns whose whole window lies inside the input: [interior_begin, interior_end).
  const int64_t interior_begin = std::min(p.out_w, CeilDiv(p.pad_left, kStrideW));
  const int64_t last_inside = p.in_w + p.pad_left - kKernelW;  // ow * stride at most this
  const int64_t interior_end =
      last_inside < 0 ? interior_begin
                      : std::clamp(last_inside / kStrideW + 1, interior_begin, p.out_w);
  // Whole tiles inside; the edges and the interior's last part in tiles with checks (narrow
  // tiles without checks for that part measured slower at 14x14 and 7x7).
  const int64_t whole_end = interior_begin + (interior_end - interior_begin) /
                                                 kDepthwiseTilePixels * kDepthwiseTilePixels;
  for (int64_t ow = 0; ow < interior_begin; ow += kDepthwiseTilePixels) {
    TileOf<kKernelW, kStrideW, kDepthwiseTilePixels, false>(
        a, ow, static_cast<int>(std::min<int64_t>(kDepthwiseTilePixels, interior_begin - ow)));
  }
  for (int64_t ow = interior_begin; ow < whole_end; ow += kDepthwiseTilePixels) {
    Tile<kKernelW, kStrideW, kDepthwiseTilePixels, true>(a, ow);
  }
  for (int64_t ow = whole_end; ow < p.out_w; ow += kDepthwiseTilePixels) {
    TileOf<kKernelW, kStrideW, kDepthwiseTilePixels, false>(
        a, ow, static_cast<int>(std::min<int64_t>(kDepthwiseTilePixels, p.out_w - ow)));
  }
}

using RowFn = void (*)(const RowArgs&);

RowFn RowFor(int64_t kernel_w, int64_t stride_w) {
  if (kernel_w == 3) return stride_w == 1 ? Row<3, 1> : Row<3, 2>;
  return stride_w == 1 ? Row<5, 1> : Row<5, 2>;
}

}  // namespace

bool BlockedDepthwiseConvAvailable() {
  return true;
}

bool BlockedDepthwiseWindowSupported(int64_t kernel_w, int64_t stride_w) {
  return (kernel_w == 3 || kernel_w == 5) && (stride_w == 1 || stride_w == 2);
}

void BlockedDepthwiseConv(const BlockedDepthwiseProblem& p, const float* x, const float* w,
                          const float* bias, std::span<const PostOp> ops, const float* residual,
                          float* y, int threads) {
  const int64_t blocks = CeilDiv(p.channels, kChannelBlock);
  if (p.batch <= 0 || blocks <= 0 || p.out_h <= 0 || p.out_w <= 0) return;
  const int64_t in_plane = p.in_h * p.in_w * kChannelBlock;
  const int64_t out_plane = p.out_h * p.out_w * kChannelBlock;
  const int64_t window = p.kernel_h * p.kernel_w * kChannelBlock;
  const RowFn row_fn = RowFor(p.kernel_w, p.stride_w);
  // A few tasks per thread (image, block, chunk of rows), a whole number per thread where the
  // rows allow.
  const int64_t nt = std::max(threads, 1);
  int64_t chunks = std::clamp<int64_t>(CeilDiv(4 * nt, p.batch * blocks), 1, p.out_h);
  while (p.batch * blocks * chunks % nt != 0 && chunks < p.out_h) ++chunks;

  RowArgs shared;  // what every task's rows share; the block's pointers per task
  shared.p = &p;
  shared.ops = ops;
  ParallelFor(threads, p.batch * blocks * chunks, [&](int64_t task, int) {
    const int64_t chunk = task % chunks;
    const int64_t block = task / chunks % blocks;
    const int64_t n = task / chunks / blocks;
    RowArgs a = shared;
    a.x = x + (n * blocks + block) * in_plane;
    a.w = w + block * window;
    const int lanes =
        static_cast<int>(std::min<int64_t>(kChannelBlock, p.channels - block * kChannelBlock));
    a.real = static_cast<__mmask16>((1u << lanes) - 1);
    a.init = bias == nullptr ? _mm512_setzero_ps()
                             : _mm512_maskz_loadu_ps(a.real, bias + block * kChannelBlock);
    const int64_t out_offset = (n * blocks + block) * out_plane;
    for (int64_t oh = p.out_h * chunk / chunks; oh < p.out_h * (chunk + 1) / chunks; ++oh) {
      a.oh = oh;
      const int64_t ih0 = oh * p.stride_h - p.pad_top;
      a.kh_begin = std::clamp<int64_t>(-ih0, 0, p.kernel_h);
      a.kh_end = std::clamp<int64_t>(p.in_h - ih0, a.kh_begin, p.kernel_h);
      const int64_t row = out_offset + oh * p.out_w * kChannelBlock;
      a.residual = residual == nullptr ? nullptr : residual + row;
      a.y = y + row;
      row_fn(a);
    }
  });
}

#else  // no AVX-512: oneDNN's primitive computes them

bool BlockedDepthwiseConvAvailable() {
  return false;
}

bool BlockedDepthwiseWindowSupported(int64_t, int64_t) {
  return false;
}

void BlockedDepthwiseConv(const BlockedDepthwiseProblem&, const float*, const float*, const float*,
                          std::span<const PostOp>, const float*, float*, int) {}

#endif

}  // namespace epctx::exec::kernels::onednn
