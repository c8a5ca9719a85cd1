#include "exec/kernels/image/resize_sample.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// Resamples axis `d` of `src` (shape `shape`) into `dst` by `t`.
Status ResizeAxisF32(const float* src, const std::vector<int64_t>& shape, size_t d,
                     const AxisTaps& t, float extrapolation, float* dst, int threads) {
  EPCTX_ASSIGN_OR_RETURN(const int64_t outer, CheckedDimProduct(shape, 0, d));
  const int64_t in_len = shape[d];
  EPCTX_ASSIGN_OR_RETURN(const int64_t inner, CheckedDimProduct(shape, d + 1, shape.size()));
  std::vector<int64_t> out_shape = shape;
  out_shape[d] = t.out;
  EPCTX_ASSIGN_OR_RETURN(const int64_t out_count, CheckedDimProduct(out_shape));
  const int64_t rows = outer * t.out;  // no more than out_count
  const int taps = t.taps_per;
  const int nt = ThreadsFor(threads, out_count > INT64_MAX / taps ? INT64_MAX : out_count * taps);
  if (inner == 1) {
    // The innermost axis: one loop per input row rather than one per output element.
    ParallelForRanges(nt, outer, 1, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const float* plane = src + o * in_len;
        float* out = dst + o * t.out;
        for (int64_t j = 0; j < t.out; ++j) {
          const int64_t* idx = t.index.data() + j * taps;
          const float* w = t.weight.data() + j * taps;
          float acc = 0;
          for (int k = 0; k < taps; ++k) acc += w[k] * plane[idx[k]];
          out[j] = t.outside[static_cast<size_t>(j)] ? extrapolation : acc;
        }
      }
    });
    return Status::Ok();
  }
  ParallelForRanges(nt, rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t o = row / t.out;
      const int64_t j = row % t.out;
      float* out = dst + row * inner;
      if (t.outside[static_cast<size_t>(j)]) {
        std::fill(out, out + inner, extrapolation);
        continue;
      }
      const int64_t* idx = t.index.data() + j * taps;
      const float* w = t.weight.data() + j * taps;
      const float* plane = src + o * in_len * inner;
      if (inner == 1) {
        float acc = 0;
        for (int k = 0; k < taps; ++k) acc += w[k] * plane[idx[k]];
        *out = acc;
        continue;
      }
      if (taps == 2) {
        const float* a = plane + idx[0] * inner;
        const float* b = plane + idx[1] * inner;
        const float wa = w[0], wb = w[1];
        for (int64_t i = 0; i < inner; ++i) out[i] = wa * a[i] + wb * b[i];
        continue;
      }
      const float* first = plane + idx[0] * inner;
      for (int64_t i = 0; i < inner; ++i) out[i] = w[0] * first[i];
      for (int k = 1; k < taps; ++k) {
        if (w[k] == 0.0f) continue;
        const float* in = plane + idx[k] * inner;
        const float wk = w[k];
        for (int64_t i = 0; i < inner; ++i) out[i] += wk * in[i];
      }
    }
  });
  return Status::Ok();
}

template <typename E>
void GatherNearest(const E* x, std::span<const int64_t> in_shape, const std::vector<AxisTaps>& taps,
                   E extrapolation, E* y, int threads) {
  const size_t rank = in_shape.size();
  // Per axis and output index: the input offset, or -1 outside the crop.
  std::vector<std::vector<int64_t>> offsets(rank);
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    const AxisTaps& t = taps[d];
    offsets[d].resize(static_cast<size_t>(t.out));
    for (int64_t j = 0; j < t.out; ++j) {
      offsets[d][static_cast<size_t>(j)] =
          t.outside[static_cast<size_t>(j)] ? -1 : t.index[static_cast<size_t>(j)] * stride;
    }
    stride *= in_shape[d];
  }
  const int64_t inner = taps[rank - 1].out;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= taps[d].out;
  const std::vector<int64_t>& last = offsets[rank - 1];
  const int nt = ThreadsFor(threads, rows * inner);
  ParallelForRanges(nt, rows, 1, [&](int64_t begin, int64_t end) {
    int64_t prev_base = -1;
    for (int64_t row = begin; row < end; ++row) {
      int64_t base = 0;
      bool outside = false;
      int64_t rest = row;
      for (size_t d = rank - 1; d-- > 0;) {
        const int64_t j = rest % taps[d].out;
        rest /= taps[d].out;
        const int64_t off = offsets[d][static_cast<size_t>(j)];
        outside = outside || off < 0;
        base += off;
      }
      E* out = y + row * inner;
      if (outside) {
        std::fill(out, out + inner, extrapolation);
        prev_base = -1;
        continue;
      }
      // Upsampling repeats rows: copy the previous output row when it read the same input row.
      if (row > begin && base == prev_base) {
        std::memcpy(out, out - inner, static_cast<size_t>(inner) * sizeof(E));
        continue;
      }
      prev_base = base;
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t off = last[static_cast<size_t>(j)];
        out[j] = off < 0 ? extrapolation : x[base + off];
      }
    }
  });
}

template <typename E>
void GatherNearestAs(const void* x, std::span<const int64_t> in_shape,
                     const std::vector<AxisTaps>& taps, const void* extrapolation, void* y,
                     int threads) {
  E e;
  std::memcpy(&e, extrapolation, sizeof(E));
  GatherNearest(static_cast<const E*>(x), in_shape, taps, e, static_cast<E*>(y), threads);
}

}  // namespace

// The order of the one-axis passes with the least work: each pass computes its output's elements
// from `taps_per` inputs each, those of the innermost axis (gathers along a row, one element at a
// time) about four times as dear as those of another (whole rows scaled and added). So an
// upscaled innermost axis goes first, while the tensor is small, and a downscaled one last; a
// bilinear upscale of 21x28x28 to 21x224x224 (a segmentation model's output) took 5.7 ms with
// the rows first, ~1 ms with the columns first. At most a few axes: every order is tried.
std::vector<size_t> CheapestPassOrder(const std::vector<int64_t>& shape,
                                      const std::vector<AxisTaps>& taps, std::vector<size_t> axes) {
  constexpr double kInnermostCost = 4;
  const size_t innermost = shape.size() - 1;
  std::sort(axes.begin(), axes.end());
  if (axes.size() > 4) return axes;
  std::vector<size_t> best = axes;
  double best_cost = -1;
  do {
    double count = 1, cost = 0;
    for (int64_t d : shape) count *= static_cast<double>(d);
    for (size_t d : axes) {
      count = count / static_cast<double>(shape[d]) * static_cast<double>(taps[d].out);
      cost += count * taps[d].taps_per * (d == innermost ? kInnermostCost : 1);
    }
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best = axes;
    }
  } while (std::next_permutation(axes.begin(), axes.end()));
  return best;
}

Status ResizeSeparableF32(const float* x, std::span<const int64_t> in_shape,
                          const std::vector<AxisTaps>& taps, float extrapolation, float* y,
                          int threads) {
  std::vector<int64_t> shape(in_shape.begin(), in_shape.end());
  std::vector<size_t> axes;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!taps[d].identity) axes.push_back(d);
  }
  if (axes.empty()) {
    EPCTX_ASSIGN_OR_RETURN(const int64_t count, CheckedDimProduct(shape));
    std::copy(x, x + count, y);
    return Status::Ok();
  }
  axes = CheapestPassOrder(shape, taps, std::move(axes));
  std::unique_ptr<float[]> buffers[2];
  const float* src = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    const size_t d = axes[i];
    std::vector<int64_t> next = shape;
    next[d] = taps[d].out;
    float* dst = y;
    if (i + 1 < axes.size()) {
      // Uninitialized: every element is written by the pass.
      EPCTX_ASSIGN_OR_RETURN(const int64_t count, CheckedDimProduct(next));
      buffers[i % 2].reset(new float[static_cast<size_t>(count)]);
      dst = buffers[i % 2].get();
    }
    EPCTX_RETURN_IF_ERROR(ResizeAxisF32(src, shape, d, taps[d], extrapolation, dst, threads));
    src = dst;
    shape = std::move(next);
  }
  return Status::Ok();
}

void ResizeNearest(const void* x, std::span<const int64_t> in_shape,
                   const std::vector<AxisTaps>& taps, size_t element_size,
                   const void* extrapolation, void* y, int threads) {
  switch (element_size) {
    case 1:
      GatherNearestAs<uint8_t>(x, in_shape, taps, extrapolation, y, threads);
      break;
    case 2:
      GatherNearestAs<uint16_t>(x, in_shape, taps, extrapolation, y, threads);
      break;
    case 4:
      GatherNearestAs<uint32_t>(x, in_shape, taps, extrapolation, y, threads);
      break;
    default:
      GatherNearestAs<uint64_t>(x, in_shape, taps, extrapolation, y, threads);
      break;
  }
}

}  // namespace epctx::exec::kernels
