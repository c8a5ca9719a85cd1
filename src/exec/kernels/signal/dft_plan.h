// The transforms DFT and STFT need for one length n, on batches of lines laid out as in
// fft_plan.h: complex lines in either direction, and real lines through a complex FFT of half
// the length when n is even (even samples as real parts, odd samples as imaginary parts, split
// apart afterwards), which halves the work of the onesided spectra STFT produces.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "epctx/status.h"
#include "exec/kernels/signal/fft_plan.h"

namespace epctx::exec::kernels {

template <typename T>
class DftPlan {
 public:
  // kInvalidArgument "DFT length {n} is outside [1, kMaxFftLength]".
  static Result<std::shared_ptr<const DftPlan>> Create(int64_t n);

  int64_t size() const { return full_->size(); }
  // Elements of T that Complex and Real need as scratch for `lanes` lanes.
  size_t scratch_size(int64_t lanes) const;

  // The transform of `lanes` complex lines: element j of lane l at re/im[j * stride + l]
  // (stride >= lanes); all n frequencies written packed to out_re/out_im[k * lanes + l].
  // `inverse` uses exp(+2*pi*i*j*k/n), unscaled.
  void Complex(const T* re, const T* im, int64_t stride, int64_t lanes, bool inverse, T* out_re,
               T* out_im, T* scratch) const;
  // The forward transform of `lanes` real lines (sample j of lane l at x[j * stride + l]),
  // frequencies [0, bins) for bins <= n written packed to out_re/out_im, which hold n * lanes
  // elements each.
  void Real(const T* x, int64_t stride, int64_t lanes, int64_t bins, T* out_re, T* out_im,
            T* scratch) const;

 private:
  DftPlan() = default;

  std::unique_ptr<const FftPlan<T>> full_;
  // Even n: the transform of n/2, and exp(-2*pi*i*k/n) / 2 for k in [0, n/2].
  std::unique_ptr<const FftPlan<T>> half_;
  std::vector<T> split_re_, split_im_;
};

extern template class DftPlan<float>;
extern template class DftPlan<double>;

}  // namespace epctx::exec::kernels
