#include "exec/kernels/onednn/blocked_conv1x1.h"

#include <algorithm>

#include "exec/kernels/common/parallel_for.h"

#if defined(__AVX512F__)
#include "exec/kernels/onednn/blocked_avx512.h"
#endif

namespace epctx::exec::kernels::onednn {

#if defined(__AVX512F__)
namespace {

constexpr int64_t kWeightBlock = kChannelBlock * kChannelBlock;
// Pixels of a tile: its sums stay in registers over every input channel. A tile computes one
// output block: with several blocks per tile (each broadcast used for more products) the
// expanding layers of MobileNetV2 ran 1.2-1.4x oneDNN's time on a Zen 4 core (16 -> 96 channels
// at 112x112: 0.54 against 0.39 ms), with one block at its time (0.38); the other layers
// measured within 7% either way.
constexpr int kPointwiseTilePixels = 16;
// Weight bytes of a group of output blocks a task computes tile by tile (a quarter of a Zen 4
// core's second-level cache).
constexpr int64_t kGroupWeightBytes = 256 << 10;

// Where one tile reads and writes: x, residual and y at the tile's first pixel, w and bias at
// its output block.
struct TileArgs {
  const float* x = nullptr;  // [in blocks][pixels][16]
  const float* w = nullptr;  // [in blocks][16 in][16 out]
  const float* bias = nullptr;
  const float* residual = nullptr;
  float* y = nullptr;
  int64_t plane = 0;  // floats from one channel block of x to the next (pixels x 16)
  int64_t in_blocks = 0;
  int last_lanes = 16;  // input channels of the last input block
  int out_lanes = 16;   // output channels of this block (fewer in the last one)
  std::span<const PostOp> ops;
};

// One output block at kPixels pixels.
// Inlined where it is used: GCC 12 compiled it on its own with a move of every sum per input
// channel (registers rotated through the unrolled loop), at 3/4 of the speed.
template <int kPixels>
__attribute__((always_inline)) inline void Tile(const TileArgs& a) {
  const __mmask16 real = static_cast<__mmask16>((1u << a.out_lanes) - 1);
  const __m512 init = a.bias == nullptr ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(real, a.bias);
  __m512 acc[kPixels];
  for (__m512& v : acc) v = init;
  auto channel = [&](const float* xb, const float* wb, int i) __attribute__((always_inline)) {
    const __m512 w = _mm512_loadu_ps(wb + i * kChannelBlock);
    for (int p = 0; p < kPixels; ++p) {
      acc[p] = _mm512_fmadd_ps(_mm512_set1_ps(xb[p * kChannelBlock + i]), w, acc[p]);
    }
  };
  const int64_t full_blocks = a.last_lanes == kChannelBlock ? a.in_blocks : a.in_blocks - 1;
  for (int64_t ib = 0; ib < full_blocks; ++ib) {
    const float* xb = a.x + ib * a.plane;
    const float* wb = a.w + ib * kWeightBlock;
#pragma GCC unroll 16
    for (int i = 0; i < kChannelBlock; ++i) channel(xb, wb, i);
  }
  if (full_blocks < a.in_blocks) {
    const float* xb = a.x + full_blocks * a.plane;
    const float* wb = a.w + full_blocks * kWeightBlock;
    for (int i = 0; i < a.last_lanes; ++i) channel(xb, wb, i);
  }
  ApplyPlainPostOps<kPixels>(a.ops, a.residual, acc);
  for (int p = 0; p < kPixels; ++p) {
    _mm512_storeu_ps(a.y + p * kChannelBlock, _mm512_maskz_mov_ps(real, acc[p]));
  }
}

// A tile of `count` (< kPixels) pixels.
template <int kPixels>
void NarrowTile(const TileArgs& a, int count) {
  if constexpr (kPixels > 1) {
    if (count == kPixels - 1) return Tile<kPixels - 1>(a);
    return NarrowTile<kPixels - 1>(a, count);
  }
}

// Output blocks [first, first + count) of one image, at pixels [p0, p1): for each tile of
// pixels, each block (the tile's input stays in the first-level cache while the blocks' weights
// come by). Tiles are kPointwiseTilePixels wide; a remainder is not left to a narrow tile of its
// own: the last full tile and it are split into two tiles of about equal width, so that no tile has
// fewer than kPointwiseTilePixels / 2 sums to interleave (each sum waits for its previous product:
// a tile of 1 pixel ran at a quarter of the speed).
struct BlockRange {
  int64_t first = 0;
  int64_t count = 0;
};
void Pixels(const TileArgs& image, BlockRange blocks, int64_t out_channels, int64_t p0,
            int64_t p1) {
  auto run = [&](int64_t p, int64_t count) {
    for (int64_t b = blocks.first; b < blocks.first + blocks.count; ++b) {
      TileArgs a = image;
      a.x = image.x + p * kChannelBlock;
      a.w = image.w + b * image.in_blocks * kWeightBlock;
      a.bias = image.bias == nullptr ? nullptr : image.bias + b * kChannelBlock;
      const int64_t at = b * image.plane + p * kChannelBlock;
      a.residual = image.residual == nullptr ? nullptr : image.residual + at;
      a.y = image.y + at;
      a.out_lanes =
          static_cast<int>(std::min<int64_t>(kChannelBlock, out_channels - b * kChannelBlock));
      if (count == kPointwiseTilePixels) {
        Tile<kPointwiseTilePixels>(a);
      } else {
        NarrowTile<kPointwiseTilePixels>(a, static_cast<int>(count));
      }
    }
  };
  const int64_t pixels = p1 - p0;
  const int64_t remainder = pixels % kPointwiseTilePixels;
  int64_t full_tiles = pixels / kPointwiseTilePixels;
  if (remainder > 0 && full_tiles > 0) --full_tiles;
  int64_t p = p0;
  for (int64_t t = 0; t < full_tiles; ++t, p += kPointwiseTilePixels) run(p, kPointwiseTilePixels);
  const int64_t left = p1 - p;  // 0, a remainder alone, or one full tile and a remainder
  if (left > kPointwiseTilePixels) {
    run(p, (left + 1) / 2);
    run(p + (left + 1) / 2, left / 2);
  } else if (left > 0) {
    run(p, left);
  }
}

}  // namespace

bool Blocked1x1ConvAvailable() {
  return true;
}

void Blocked1x1Conv(const Blocked1x1Problem& p, const float* x, const float* w, const float* bias,
                    std::span<const PostOp> ops, const float* residual, float* y, int threads) {
  const int64_t in_blocks = CeilDiv(p.in_channels, kChannelBlock);
  const int64_t out_blocks = CeilDiv(p.out_channels, kChannelBlock);
  const int64_t plane = p.pixels * kChannelBlock;
  if (p.batch <= 0 || out_blocks <= 0 || p.pixels <= 0) return;
  // Output blocks in groups whose weights stay in the second-level cache while a task's tiles
  // read them; groups and chunks of pixels make a few tasks per thread.
  const int64_t group_blocks =
      std::clamp<int64_t>(kGroupWeightBytes / (in_blocks * kWeightBlock * 4), 1, out_blocks);
  int64_t groups = CeilDiv(out_blocks, group_blocks);
  const int64_t tiles = CeilDiv(p.pixels, kPointwiseTilePixels);
  const int64_t nt = std::max(threads, 1);
  int64_t chunks = std::clamp<int64_t>(CeilDiv(4 * nt, p.batch * groups), 1, tiles);
  // Whole rounds of tasks per thread where the work allows: on 2 threads, 9 equal tasks take as
  // long as 10 (MobileNetV2's 160 -> 960 channels at 7x7 ran at 1.1x oneDNN's time so).
  for (int tries = 0; tries < 8 && p.batch * groups * chunks % nt != 0; ++tries) {
    if (chunks < tiles) {
      ++chunks;
    } else if (groups < out_blocks) {
      ++groups;
    } else {
      break;
    }
  }

  TileArgs shared;  // what every task's tiles share; the image's pointers per task
  shared.w = w;
  shared.bias = bias;
  shared.plane = plane;
  shared.in_blocks = in_blocks;
  shared.last_lanes = static_cast<int>(p.in_channels - (in_blocks - 1) * kChannelBlock);
  shared.ops = ops;
  ParallelFor(threads, p.batch * groups * chunks, [&](int64_t task, int) {
    const int64_t chunk = task % chunks;
    const int64_t group = task / chunks % groups;
    const int64_t n = task / chunks / groups;
    TileArgs image = shared;
    image.x = x + n * in_blocks * plane;
    image.residual = residual == nullptr ? nullptr : residual + n * out_blocks * plane;
    image.y = y + n * out_blocks * plane;
    // Groups split evenly (9 blocks in 2 groups: 4 + 5).
    const BlockRange blocks{out_blocks * group / groups,
                            out_blocks * (group + 1) / groups - out_blocks * group / groups};
    // Chunks of equal size (within a pixel): 49 pixels in 4 chunks are 12 + 12 + 12 + 13, not
    // 3 tiles of 16 and a chunk of 1 pixel.
    Pixels(image, blocks, p.out_channels, p.pixels * chunk / chunks,
           p.pixels * (chunk + 1) / chunks);
  });
}

#else  // no AVX-512: oneDNN's primitive computes them

bool Blocked1x1ConvAvailable() {
  return false;
}

void Blocked1x1Conv(const Blocked1x1Problem&, const float*, const float*, const float*,
                    std::span<const PostOp>, const float*, float*, int) {}

#endif

}  // namespace epctx::exec::kernels::onednn
