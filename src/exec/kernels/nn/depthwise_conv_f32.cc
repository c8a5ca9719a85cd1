// Convolution with one input channel per group (depthwise, possibly with a channel multiplier):
// a GEMM would have K = kernel taps (9 for 3x3), far too thin to pay for packing, so each output
// plane is accumulated directly, one kernel tap at a time over whole output rows.
#include <algorithm>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/nn/conv_f32.h"

namespace epctx::exec::kernels {
namespace {

void DepthwisePlane(const Window3d& w, const float* x, const float* filter, float* y) {
  const int64_t out_h = w.out[1], out_w = w.out[2];
  const int64_t sw = w.stride[2];
  std::fill(y, y + w.out_size(), 0.0f);
  for (int64_t od = 0; od < w.out[0]; ++od) {
    for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
      const int64_t id = od * w.stride[0] + kd * w.dilation[0] - w.pad_begin[0];
      if (id < 0 || id >= w.in[0]) continue;
      for (int64_t oh = 0; oh < out_h; ++oh) {
        float* yr = y + (od * out_h + oh) * out_w;
        for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
          const int64_t ih = oh * w.stride[1] + kh * w.dilation[1] - w.pad_begin[1];
          if (ih < 0 || ih >= w.in[1]) continue;
          const float* xr = x + (id * w.in[1] + ih) * w.in[2];
          const float* fr = filter + (kd * w.kernel[1] + kh) * w.kernel[2];
          for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
            const float f = fr[kw];
            const int64_t off = kw * w.dilation[2] - w.pad_begin[2];
            const int64_t lo = std::min(out_w, FirstInside(off, sw, 0));
            const int64_t hi = std::max(lo, std::min(out_w, EndInside(off, sw, w.in[2])));
            if (sw == 1) {
              for (int64_t j = lo; j < hi; ++j) yr[j] += f * xr[j + off];
            } else {
              for (int64_t j = lo; j < hi; ++j) yr[j] += f * xr[j * sw + off];
            }
          }
        }
      }
    }
  }
}

}  // namespace

void DepthwiseConvF32(const ConvShape& p, int threads, const float* x, const float* w,
                      const float* bias, const Activation& act, float* y) {
  const int64_t planes = p.batch * p.out_channels;
  const int64_t mg = p.out_per_group();
  const int64_t in_size = p.window.in_size();
  const int64_t out_size = p.window.out_size();
  const int64_t taps = p.window.kernel_size();
  ParallelForRanges(threads, planes, 1, [&](int64_t first, int64_t last) {
    for (int64_t plane = first; plane < last; ++plane) {
      const int64_t n = plane / p.out_channels;
      const int64_t m = plane % p.out_channels;
      const float* xc = x + (n * p.in_channels + m / mg) * in_size;
      float* yc = y + plane * out_size;
      DepthwisePlane(p.window, xc, w + m * taps, yc);
      ApplyBiasActivation(act, bias != nullptr ? bias[m] : 0.0f, yc, out_size);
    }
  });
}

}  // namespace epctx::exec::kernels
