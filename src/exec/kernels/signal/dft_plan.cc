#include "exec/kernels/signal/dft_plan.h"

#include <algorithm>

#include "exec/kernels/signal/fft_stages.h"
#include "exec/kernels/signal/unit_roots.h"
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
  // Bin k from Z[a] and Z[b], lane l.
  auto split = [&](int64_t k, int64_t a, int64_t b, int64_t l) {
    const T ar = z_re[a * lanes + l], ai = z_im[a * lanes + l];
    const T br = z_re[b * lanes + l], bi = z_im[b * lanes + l];
    const T sr = ar + br, dr = ar - br, si = ai + bi, di = ai - bi;
    out_re[k * lanes + l] = T(0.5) * sr + w_re[k] * si + w_im[k] * dr;
    out_im[k * lanes + l] = T(0.5) * di + w_im[k] * si - w_re[k] * dr;
  };
  if (lanes == kMaxLanes<T>) {
    for (int64_t k = 0; k < direct; ++k) {
      const int64_t a = k == h ? 0 : k, b = k == 0 ? 0 : h - k;
      const V var = LoadVec<V>(z_re + a * lanes), vai = LoadVec<V>(z_im + a * lanes);
      const V vbr = LoadVec<V>(z_re + b * lanes), vbi = LoadVec<V>(z_im + b * lanes);
      const V sr = var + vbr, dr = var - vbr, si = vai + vbi, di = vai - vbi;
      const T wr = w_re[k], wi = w_im[k];
      StoreVec(out_re + k * lanes, T(0.5) * sr + wr * si + wi * dr);
      StoreVec(out_im + k * lanes, T(0.5) * di + wi * si - wr * dr);
    }
  } else {
    // Bins 0 and h read Z[0] twice; those between read Z[k] and Z[h-k].
    ForEachPositionLane(0, std::min<int64_t>(direct, 1), lanes,
                        [&](int64_t, int64_t l) { split(0, 0, 0, l); });
    ForEachPositionLane(1, std::min(direct, h), lanes,
                        [&](int64_t k, int64_t l) { split(k, k, h - k, l); });
    ForEachPositionLane(h, direct, lanes, [&](int64_t, int64_t l) { split(h, 0, 0, l); });
  }
  // The rest of a full spectrum mirrors the first half: X[k] = conj(X[n-k]).
  ForEachPositionLane(direct, bins, lanes, [&](int64_t k, int64_t l) {
    out_re[k * lanes + l] = out_re[(n - k) * lanes + l];
    out_im[k * lanes + l] = -out_im[(n - k) * lanes + l];
  });
}

}  // namespace

template <typename T>
Result<std::shared_ptr<const DftPlan<T>>> DftPlan<T>::Create(int64_t n) {
  auto plan = std::shared_ptr<DftPlan>(new DftPlan());
  EPCTX_RETURN_IF_ERROR(CheckFftLength(n));
  // One table of roots for the transform of n, of n/2 and the split between them.
  const UnitRoots roots(n);
  EPCTX_ASSIGN_OR_RETURN(plan->full_, FftPlan<T>::Create(n, &roots));
  if (n % 2 == 0) {
    const int64_t h = n / 2;
    EPCTX_ASSIGN_OR_RETURN(plan->half_, FftPlan<T>::Create(h, &roots));
    for (int64_t k = 0; k <= h; ++k) {
      plan->split_re_.push_back(static_cast<T>(0.5 * roots.re(k)));
      plan->split_im_.push_back(static_cast<T>(0.5 * roots.im(k)));
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
    ForEachPositionLane(0, n, lanes, [&](int64_t j, int64_t l) {
      re[j * lanes + l] = x[j * stride + l];
      im[j * lanes + l] = T(0);
    });
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
