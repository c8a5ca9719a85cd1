#include "exec/kernels/signal/dft_plan.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "exec/kernels/signal/fft_stages.h"
#include "exec/kernels/signal/vector_width.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {

namespace {

// With Z the transform of z[j] = x[2j] + i*x[2j+1] (length h = n/2), the even samples'
// transform is E[k] = (Z[k] + conj(Z[h-k])) / 2 and the odd samples' is
// O[k] = (Z[k] - conj(Z[h-k])) / (2i) (indices mod h), and X[k] = E[k] + exp(-2*pi*i*k/n) * O[k].
// w holds exp(-2*pi*i*k/n) / 2. A batch of exactly kMaxLanes<T> lanes is one vector per bin.
template <typename T>
void SplitHalfSpectrum(const T* z_re, const T* z_im, int64_t lanes, int64_t n, int64_t bins,
                       const T* w_re, const T* w_im, T* out_re, T* out_im) {
  using V = typename VecOf<T, kMaxLanes<T>>::type;
  const int64_t h = n / 2;
  const int64_t direct = std::min(bins, h + 1);
  for (int64_t k = 0; k < direct; ++k) {
    const int64_t a = k == h ? 0 : k, b = k == 0 ? 0 : h - k;
    const T* ar = z_re + a * lanes;
    const T* ai = z_im + a * lanes;
    const T* br = z_re + b * lanes;
    const T* bi = z_im + b * lanes;
    T* yr = out_re + k * lanes;
    T* yi = out_im + k * lanes;
    const T wr = w_re[k], wi = w_im[k];
    if (lanes == kMaxLanes<T>) {
      const V var = LoadVec<V>(ar), vai = LoadVec<V>(ai);
      const V vbr = LoadVec<V>(br), vbi = LoadVec<V>(bi);
      const V sr = var + vbr, dr = var - vbr, si = vai + vbi, di = vai - vbi;
      StoreVec(yr, T(0.5) * sr + wr * si + wi * dr);
      StoreVec(yi, T(0.5) * di + wi * si - wr * dr);
      continue;
    }
    EPCTX_FFT_VECTORIZE
    for (int64_t l = 0; l < lanes; ++l) {
      const T sr = ar[l] + br[l], dr = ar[l] - br[l];
      const T si = ai[l] + bi[l], di = ai[l] - bi[l];
      yr[l] = T(0.5) * sr + wr * si + wi * dr;
      yi[l] = T(0.5) * di + wi * si - wr * dr;
    }
  }
  // The rest of a full spectrum mirrors the first half: X[k] = conj(X[n-k]).
  for (int64_t k = direct; k < bins; ++k) {
    const T* sr = out_re + (n - k) * lanes;
    const T* si = out_im + (n - k) * lanes;
    T* yr = out_re + k * lanes;
    T* yi = out_im + k * lanes;
    for (int64_t l = 0; l < lanes; ++l) {
      yr[l] = sr[l];
      yi[l] = -si[l];
    }
  }
}

}  // namespace

template <typename T>
Result<std::shared_ptr<const DftPlan<T>>> DftPlan<T>::Create(int64_t n) {
  auto plan = std::shared_ptr<DftPlan>(new DftPlan());
  EPCTX_ASSIGN_OR_RETURN(plan->full_, FftPlan<T>::Create(n));
  if (n % 2 == 0) {
    const int64_t h = n / 2;
    EPCTX_ASSIGN_OR_RETURN(plan->half_, FftPlan<T>::Create(h));
    for (int64_t k = 0; k <= h; ++k) {
      const long double angle = -2 * std::numbers::pi_v<long double> * static_cast<long double>(k) /
                                static_cast<long double>(n);
      plan->split_re_.push_back(static_cast<T>(0.5 * std::cos(angle)));
      plan->split_im_.push_back(static_cast<T>(0.5 * std::sin(angle)));
    }
  }
  return std::shared_ptr<const DftPlan>(std::move(plan));
}

template <typename T>
size_t DftPlan<T>::scratch_size(int64_t lanes) const {
  const size_t n = static_cast<size_t>(size()), l = static_cast<size_t>(lanes);
  if (half_ == nullptr) return 2 * n * l + full_->scratch_size(lanes);
  return std::max(full_->scratch_size(lanes), n * l + half_->scratch_size(lanes));
}

template <typename T>
void DftPlan<T>::Complex(const T* re, const T* im, int64_t stride, int64_t lanes, bool inverse,
                         T* out_re, T* out_im, T* scratch) const {
  if (inverse) {
    full_->Backward(re, im, stride, lanes, out_re, out_im, scratch);
  } else {
    full_->Forward(re, im, stride, lanes, out_re, out_im, scratch);
  }
}

template <typename T>
void DftPlan<T>::Real(const T* x, int64_t stride, int64_t lanes, int64_t bins, T* out_re, T* out_im,
                      T* scratch) const {
  const int64_t n = size();
  if (half_ == nullptr) {
    // Odd n: a complex transform with zero imaginary parts.
    T* re = scratch;
    T* im = re + n * lanes;
    for (int64_t j = 0; j < n; ++j)
      std::copy(x + j * stride, x + j * stride + lanes, re + j * lanes);
    std::fill(im, im + n * lanes, T(0));
    full_->Forward(re, im, lanes, lanes, out_re, out_im, im + n * lanes);
    return;
  }
  // z[j] = x[2j] + i*x[2j+1]: positions of z are two positions of x apart.
  const int64_t h = n / 2;
  T* z_re = scratch;
  T* z_im = z_re + h * lanes;
  half_->Forward(x, x + stride, 2 * stride, lanes, z_re, z_im, z_im + h * lanes);
  SplitHalfSpectrum(z_re, z_im, lanes, n, bins, split_re_.data(), split_im_.data(), out_re, out_im);
}

template class DftPlan<float>;
template class DftPlan<double>;

}  // namespace epctx::exec::kernels
