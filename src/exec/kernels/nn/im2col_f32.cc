#include "exec/kernels/nn/im2col_f32.h"

#include <algorithm>
#include <cstring>

namespace epctx::exec::kernels {

void Im2ColF32(const float* x, const Window3d& w, int64_t k_begin, int64_t k_end, int64_t p_begin,
               int64_t p_end, float* col, int64_t ld) {
  const int64_t kd_n = w.kernel[0], kh_n = w.kernel[1], kw_n = w.kernel[2];
  const int64_t taps = kd_n * kh_n * kw_n;
  const int64_t in_d = w.in[0], in_h = w.in[1], in_w = w.in[2];
  const int64_t out_h = w.out[1], out_w = w.out[2];
  const int64_t sd = w.stride[0], sh = w.stride[1], sw = w.stride[2];
  const int64_t in_size = w.in_size();
  for (int64_t k = k_begin; k < k_end; ++k) {
    const int64_t c = k / taps;
    const int64_t tap = k % taps;
    const int64_t off_d = (tap / (kh_n * kw_n)) * w.dilation[0] - w.pad_begin[0];
    const int64_t off_h = (tap / kw_n % kh_n) * w.dilation[1] - w.pad_begin[1];
    const int64_t off_w = (tap % kw_n) * w.dilation[2] - w.pad_begin[2];
    // Output columns whose input column lies inside [0, in_w) for this tap.
    const int64_t ow_lo = std::min(out_w, FirstInside(off_w, sw, 0));
    const int64_t ow_hi = std::max(ow_lo, std::min(out_w, EndInside(off_w, sw, in_w)));
    const float* xc = x + c * in_size;
    float* row = col + (k - k_begin) * ld;

    int64_t p = p_begin;
    int64_t ow = p % out_w;
    int64_t oh = p / out_w % out_h;
    int64_t od = p / (out_w * out_h);
    while (p < p_end) {
      const int64_t seg_end = std::min(out_w, ow + (p_end - p));
      float* dst = row + (p - p_begin);  // dst[0] is output column ow of this output row
      const int64_t id = od * sd + off_d;
      const int64_t ih = oh * sh + off_h;
      if (id < 0 || id >= in_d || ih < 0 || ih >= in_h) {
        std::fill(dst, dst + (seg_end - ow), 0.0f);
      } else {
        const float* xr = xc + (id * in_h + ih) * in_w;
        const int64_t lo = std::clamp(ow_lo, ow, seg_end);
        const int64_t hi = std::clamp(ow_hi, lo, seg_end);
        std::fill(dst, dst + (lo - ow), 0.0f);
        if (sw == 1) {
          std::memcpy(dst + (lo - ow), xr + (lo + off_w),
                      static_cast<size_t>(hi - lo) * sizeof(float));
        } else {
          for (int64_t j = lo; j < hi; ++j) dst[j - ow] = xr[j * sw + off_w];
        }
        std::fill(dst + (hi - ow), dst + (seg_end - ow), 0.0f);
      }
      p += seg_end - ow;
      ow = seg_end;
      if (ow == out_w) {
        ow = 0;
        if (++oh == out_h) {
          oh = 0;
          ++od;
        }
      }
    }
  }
}

}  // namespace epctx::exec::kernels
