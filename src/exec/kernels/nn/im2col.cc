#include "exec/kernels/nn/im2col.h"

#include <algorithm>
#include <cstring>

namespace epctx::exec::kernels {

template <typename T>
void Im2Col(const T* x, const Window3d& w, int64_t k_begin, int64_t k_end, int64_t p_begin,
            int64_t p_end, T* col, int64_t ld) {
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
    const T* xc = x + c * in_size;
    T* row = col + (k - k_begin) * ld;

    int64_t p = p_begin;
    int64_t ow = p % out_w;
    int64_t oh = p / out_w % out_h;
    int64_t od = p / (out_w * out_h);
    while (p < p_end) {
      const int64_t seg_end = std::min(out_w, ow + (p_end - p));
      T* dst = row + (p - p_begin);  // dst[0] is output column ow of this output row
      const int64_t id = od * sd + off_d;
      const int64_t ih = oh * sh + off_h;
      if (id < 0 || id >= in_d || ih < 0 || ih >= in_h) {
        std::fill(dst, dst + (seg_end - ow), T{0});
      } else {
        const T* xr = xc + (id * in_h + ih) * in_w;
        const int64_t lo = std::clamp(ow_lo, ow, seg_end);
        const int64_t hi = std::clamp(ow_hi, lo, seg_end);
        std::fill(dst, dst + (lo - ow), T{0});
        if (sw == 1) {
          std::memcpy(dst + (lo - ow), xr + (lo + off_w), static_cast<size_t>(hi - lo) * sizeof(T));
        } else {
          for (int64_t j = lo; j < hi; ++j) dst[j - ow] = xr[j * sw + off_w];
        }
        std::fill(dst + (hi - ow), dst + (seg_end - ow), T{0});
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

template void Im2Col<float>(const float*, const Window3d&, int64_t, int64_t, int64_t, int64_t,
                            float*, int64_t);
template void Im2Col<int32_t>(const int32_t*, const Window3d&, int64_t, int64_t, int64_t, int64_t,
                              int32_t*, int64_t);

}  // namespace epctx::exec::kernels
