#include "exec/kernels/signal/fft_plan.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "exec/kernels/signal/fft_stages.h"
#include "exec/kernels/signal/vector_width.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// exp(-2*pi*i*t/n) for t in [0, n), in long double so that the double tables are correctly
// rounded (the angle's own rounding error in double would cost several ulps).
class UnitRoots {
 public:
  explicit UnitRoots(int64_t n) : n_(n), re_(static_cast<size_t>(n)), im_(static_cast<size_t>(n)) {
    const long double pi = 3.141592653589793238462643383279502884L;
    for (int64_t t = 0; t < n; ++t) {
      const long double angle = -2 * pi * static_cast<long double>(t) / static_cast<long double>(n);
      re_[static_cast<size_t>(t)] = std::cos(angle);
      im_[static_cast<size_t>(t)] = std::sin(angle);
    }
  }
  // exp(-2*pi*i*num/n) for any num >= 0.
  long double re(int64_t num) const { return re_[static_cast<size_t>(num % n_)]; }
  long double im(int64_t num) const { return im_[static_cast<size_t>(num % n_)]; }

 private:
  int64_t n_;
  std::vector<long double> re_, im_;
};

// The radices of n: fours first (fewest passes), a two, then the odd primes in increasing
// order.
std::vector<int64_t> Factorize(int64_t n) {
  std::vector<int64_t> radices;
  while (n % 4 == 0) {
    radices.push_back(4);
    n /= 4;
  }
  if (n % 2 == 0) {
    radices.push_back(2);
    n /= 2;
  }
  for (int64_t p = 3; p * p <= n; p += 2) {
    while (n % p == 0) {
      radices.push_back(p);
      n /= p;
    }
  }
  if (n > 1) radices.push_back(n);
  return radices;
}

// The smallest m >= target whose prime factors are 2, 3 and 5.
int64_t SmoothLengthAtLeast(int64_t target) {
  int64_t best = 1;
  while (best < target) best *= 2;
  for (int64_t p5 = 1; p5 < 2 * target; p5 *= 5) {
    for (int64_t p35 = p5; p35 < 2 * target; p35 *= 3) {
      int64_t m = p35;
      while (m < target) m *= 2;
      best = std::min(best, m);
    }
  }
  return best;
}

template <typename T, int kCount>
void RunStage(int radix, const FftStage<T>& s, const T* odd_cos, const T* odd_sin) {
  switch (radix) {
    case 2:
      return FftRadix2Stage<T, kCount>(s);
    case 3:
      return FftRadix3Stage<T, kCount>(s);
    case 4:
      return FftRadix4Stage<T, kCount>(s);
    case 5:
      return FftRadix5Stage<T, kCount>(s);
    default:
      return FftOddRadixStage(s, radix, odd_cos, odd_sin);
  }
}

}  // namespace

template <typename T>
Result<std::unique_ptr<const FftPlan<T>>> FftPlan<T>::Create(int64_t n) {
  if (n < 1 || n > kMaxFftLength) {
    return EPCTX_ERROR(kInvalidArgument, "DFT length {} is outside [1, {}]", n, kMaxFftLength);
  }
  return std::unique_ptr<const FftPlan>(Build(n));
}

template <typename T>
std::unique_ptr<FftPlan<T>> FftPlan<T>::Build(int64_t n) {
  auto plan = std::unique_ptr<FftPlan>(new FftPlan());
  plan->n_ = n;
  const std::vector<int64_t> radices = Factorize(n);
  if (std::all_of(radices.begin(), radices.end(), [](int64_t p) { return p <= kMaxOddRadix; })) {
    plan->BuildStages(std::vector<int>(radices.begin(), radices.end()));
  } else {
    plan->BuildBluestein();
  }
  return plan;
}

template <typename T>
void FftPlan<T>::BuildStages(const std::vector<int>& radices) {
  const UnitRoots roots(n_);
  int64_t done = 1;  // product of the radices of earlier stages
  for (int p : radices) {
    Stage stage;
    stage.radix = p;
    stage.m = n_ / done / p;
    stage.twiddles = twiddle_re_.size();
    // exp(-2*pi*i*j*k/(p*m)) = exp(-2*pi*i*j*k*done/n)
    for (int64_t j = 0; j < stage.m; ++j) {
      for (int64_t k = 1; k < p; ++k) {
        twiddle_re_.push_back(static_cast<T>(roots.re(j * k * done)));
        twiddle_im_.push_back(static_cast<T>(roots.im(j * k * done)));
      }
    }
    if (p > 5) {
      // cos(2*pi*t/p) and sin(2*pi*t/p): the conjugates of exp(-2*pi*i*t*(n/p)/n)
      stage.odd_radix = odd_cos_.size();
      for (int64_t t = 0; t < p; ++t) {
        odd_cos_.push_back(static_cast<T>(roots.re(t * (n_ / p))));
        odd_sin_.push_back(static_cast<T>(-roots.im(t * (n_ / p))));
      }
    }
    stages_.push_back(stage);
    done *= p;
  }
}

template <typename T>
void FftPlan<T>::BuildBluestein() {
  // j*k = (j^2 + k^2 - (k - j)^2) / 2 turns the transform into chirp * ((chirp * x) conv
  // conj(chirp)).
  const int64_t m = SmoothLengthAtLeast(2 * n_ - 1);
  inner_ = Build(m);
  const UnitRoots roots(2 * n_);
  std::vector<double> b_re(static_cast<size_t>(m), 0.0), b_im(static_cast<size_t>(m), 0.0);
  chirp_re_.resize(static_cast<size_t>(n_));
  chirp_im_.resize(static_cast<size_t>(n_));
  for (int64_t j = 0; j < n_; ++j) {
    // exp(-pi*i*j^2/n) = exp(-2*pi*i*(j^2 mod 2n)/(2n)); n <= kMaxFftLength keeps j^2 in range.
    const long double re = roots.re(j * j), im = roots.im(j * j);
    chirp_re_[static_cast<size_t>(j)] = static_cast<T>(re);
    chirp_im_[static_cast<size_t>(j)] = static_cast<T>(im);
    b_re[static_cast<size_t>(j)] = static_cast<double>(re);
    b_im[static_cast<size_t>(j)] = static_cast<double>(-im);
    if (j > 0) {
      b_re[static_cast<size_t>(m - j)] = static_cast<double>(re);
      b_im[static_cast<size_t>(m - j)] = static_cast<double>(-im);
    }
  }
  // The kernel's transform is computed in double whatever T is.
  std::unique_ptr<FftPlan<double>> exact = FftPlan<double>::Build(m);
  std::vector<double> k_re(static_cast<size_t>(m)), k_im(static_cast<size_t>(m));
  std::vector<double> work(exact->scratch_size(1));
  exact->Forward(b_re.data(), b_im.data(), 1, 1, k_re.data(), k_im.data(), work.data());
  kernel_re_.resize(static_cast<size_t>(m));
  kernel_im_.resize(static_cast<size_t>(m));
  for (int64_t k = 0; k < m; ++k) {
    kernel_re_[static_cast<size_t>(k)] =
        static_cast<T>(k_re[static_cast<size_t>(k)] / static_cast<double>(m));
    kernel_im_[static_cast<size_t>(k)] =
        static_cast<T>(k_im[static_cast<size_t>(k)] / static_cast<double>(m));
  }
}

template <typename T>
size_t FftPlan<T>::scratch_size(int64_t lanes) const {
  const size_t l = static_cast<size_t>(lanes);
  if (inner_ == nullptr) return 2 * static_cast<size_t>(n_) * l;
  const size_t m = static_cast<size_t>(inner_->size());
  return 4 * m * l + inner_->scratch_size(lanes);
}

template <typename T>
void FftPlan<T>::Forward(const T* in_re, const T* in_im, int64_t in_stride, int64_t lanes,
                         T* out_re, T* out_im, T* scratch) const {
  if (inner_ != nullptr) {
    RunBluestein(in_re, in_im, in_stride, lanes, out_re, out_im, scratch);
  } else {
    RunStages(in_re, in_im, in_stride, lanes, out_re, out_im, scratch);
  }
}

template <typename T>
void FftPlan<T>::RunStages(const T* in_re, const T* in_im, int64_t in_stride, int64_t lanes,
                           T* out_re, T* out_im, T* work) const {
  const size_t count = stages_.size();
  if (count == 0) {  // n == 1
    std::copy(in_re, in_re + lanes, out_re);
    std::copy(in_im, in_im + lanes, out_im);
    return;
  }
  T* work_re = work;
  T* work_im = work + n_ * lanes;
  FftStage<T> s{in_re, in_im, in_stride, nullptr, nullptr, lanes, 0, nullptr, nullptr};
  for (size_t i = 0; i < count; ++i) {
    const Stage& stage = stages_[i];
    // Buffers alternate so that the last stage writes the output.
    const bool to_out = (count - 1 - i) % 2 == 0;
    s.y_re = to_out ? out_re : work_re;
    s.y_im = to_out ? out_im : work_im;
    s.m = stage.m;
    s.tw_re = twiddle_re_.data() + stage.twiddles;
    s.tw_im = twiddle_im_.data() + stage.twiddles;
    // The first stage of a full batch has one register of lanes per butterfly.
    if (i == 0 && lanes == kMaxLanes<T>) {
      RunStage<T, kMaxLanes<T>>(stage.radix, s, odd_cos_.data() + stage.odd_radix,
                                odd_sin_.data() + stage.odd_radix);
    } else {
      RunStage<T, 0>(stage.radix, s, odd_cos_.data() + stage.odd_radix,
                     odd_sin_.data() + stage.odd_radix);
    }
    s.x_re = s.y_re;
    s.x_im = s.y_im;
    s.count *= stage.radix;
    s.x_stride = s.count;
  }
}

template <typename T>
void FftPlan<T>::RunBluestein(const T* in_re, const T* in_im, int64_t in_stride, int64_t lanes,
                              T* out_re, T* out_im, T* scratch) const {
  const int64_t m = inner_->size();
  T* a_re = scratch;
  T* a_im = a_re + m * lanes;
  T* b_re = a_im + m * lanes;
  T* b_im = b_re + m * lanes;
  T* work = b_im + m * lanes;
  for (int64_t j = 0; j < n_; ++j) {
    const T cr = chirp_re_[static_cast<size_t>(j)], ci = chirp_im_[static_cast<size_t>(j)];
    const T* xr = in_re + j * in_stride;
    const T* xi = in_im + j * in_stride;
    T* ar = a_re + j * lanes;
    T* ai = a_im + j * lanes;
    EPCTX_FFT_VECTORIZE
    for (int64_t l = 0; l < lanes; ++l) {
      ar[l] = xr[l] * cr - xi[l] * ci;
      ai[l] = xr[l] * ci + xi[l] * cr;
    }
  }
  std::fill(a_re + n_ * lanes, a_re + m * lanes, T(0));
  std::fill(a_im + n_ * lanes, a_im + m * lanes, T(0));
  inner_->Forward(a_re, a_im, lanes, lanes, b_re, b_im, work);
  for (int64_t k = 0; k < m; ++k) {
    const T kr = kernel_re_[static_cast<size_t>(k)], ki = kernel_im_[static_cast<size_t>(k)];
    T* br = b_re + k * lanes;
    T* bi = b_im + k * lanes;
    EPCTX_FFT_VECTORIZE
    for (int64_t l = 0; l < lanes; ++l) {
      const T r = br[l] * kr - bi[l] * ki;
      bi[l] = br[l] * ki + bi[l] * kr;
      br[l] = r;
    }
  }
  // The circular convolution, as the backward transform (kernel_ holds the 1/m) into a.
  inner_->Backward(b_re, b_im, lanes, lanes, a_re, a_im, work);
  for (int64_t k = 0; k < n_; ++k) {
    const T cr = chirp_re_[static_cast<size_t>(k)], ci = chirp_im_[static_cast<size_t>(k)];
    const T* ar = a_re + k * lanes;
    const T* ai = a_im + k * lanes;
    T* yr = out_re + k * lanes;
    T* yi = out_im + k * lanes;
    EPCTX_FFT_VECTORIZE
    for (int64_t l = 0; l < lanes; ++l) {
      yr[l] = ar[l] * cr - ai[l] * ci;
      yi[l] = ar[l] * ci + ai[l] * cr;
    }
  }
}

template class FftPlan<float>;
template class FftPlan<double>;

}  // namespace epctx::exec::kernels
