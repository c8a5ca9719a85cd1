#include "exec/kernels/signal/fft_plan.h"

#include <algorithm>

#include "exec/kernels/signal/fft_stages.h"
#include "exec/kernels/signal/unit_roots.h"
#include "exec/kernels/signal/vector_width.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

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

Status CheckFftLength(int64_t n) {
  if (n < 1 || n > kMaxFftLength) {
    return EPCTX_ERROR(kInvalidArgument, "DFT length {} is outside [1, {}]", n, kMaxFftLength);
  }
  return Status::Ok();
}

template <typename T>
Result<std::unique_ptr<const FftPlan<T>>> FftPlan<T>::Create(int64_t n, const UnitRoots* roots) {
  EPCTX_RETURN_IF_ERROR(CheckFftLength(n));
  return std::unique_ptr<const FftPlan>(Build(n, true, roots));
}

template <typename T>
std::unique_ptr<FftPlan<T>> FftPlan<T>::Build(int64_t n, bool may_split, const UnitRoots* roots) {
  auto plan = std::unique_ptr<FftPlan>(new FftPlan());
  plan->n_ = n;
  const std::vector<int64_t> radices = Factorize(n);
  if (std::all_of(radices.begin(), radices.end(), [](int64_t p) { return p <= kMaxOddRadix; })) {
    const UnitRoots own = roots != nullptr ? UnitRoots(*roots, n) : UnitRoots(n);
    plan->BuildStages(std::vector<int>(radices.begin(), radices.end()),
                      may_split && n >= kMinSplitLength, own);
  } else {
    plan->BuildBluestein();
  }
  return plan;
}

template <typename T>
void FftPlan<T>::BuildStages(const std::vector<int>& radices, bool split, const UnitRoots& roots) {
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
  if (!split) return;
  // Two factors for batches of few lanes (RunSplit). n1: the largest divisor of n up to sqrt(n), so
  // both factors have many lanes.
  int64_t n1 = 1;
  for (int64_t d = 2; d * d <= n_; ++d) {
    if (n_ % d == 0) n1 = d;
  }
  if (n1 < 4) return;
  const int64_t n2 = n_ / n1;
  rows_ = Build(n1, false, &roots);
  cols_ = Build(n2, false, &roots);
  split_re_.resize(static_cast<size_t>(n_));
  split_im_.resize(static_cast<size_t>(n_));
  for (int64_t k1 = 0; k1 < n1; ++k1) {
    for (int64_t j2 = 0; j2 < n2; ++j2) {
      split_re_[static_cast<size_t>(k1 * n2 + j2)] = static_cast<T>(roots.re(k1 * j2));
      split_im_[static_cast<size_t>(k1 * n2 + j2)] = static_cast<T>(roots.im(k1 * j2));
    }
  }
}

template <typename T>
void FftPlan<T>::BuildBluestein() {
  // j*k = (j^2 + k^2 - (k - j)^2) / 2 turns the transform into chirp * ((chirp * x) conv
  // conj(chirp)).
  const int64_t m = SmoothLengthAtLeast(2 * n_ - 1);
  inner_ = Build(m, true, nullptr);
  const UnitRoots roots(2 * n_);
  std::vector<double> b_re(static_cast<size_t>(m), 0.0), b_im(static_cast<size_t>(m), 0.0);
  chirp_re_.resize(static_cast<size_t>(n_));
  chirp_im_.resize(static_cast<size_t>(n_));
  for (int64_t j = 0; j < n_; ++j) {
    // exp(-pi*i*j^2/n) = exp(-2*pi*i*(j^2 mod 2n)/(2n)); n <= kMaxFftLength keeps j^2 in range.
    const double re = roots.re(j * j), im = roots.im(j * j);
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
  std::unique_ptr<FftPlan<double>> exact = FftPlan<double>::Build(m, false, nullptr);
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
bool FftPlan<T>::splits(int64_t lanes) const {
  return rows_ != nullptr && lanes < kMaxLanes<T>;
}

template <typename T>
size_t FftPlan<T>::scratch_size(int64_t lanes) const {
  const size_t l = static_cast<size_t>(lanes), n = static_cast<size_t>(n_);
  if (inner_ != nullptr) {
    const size_t m = static_cast<size_t>(inner_->size());
    return 4 * m * l + inner_->scratch_size(lanes);
  }
  // Split: the packed input, the rows' output and its transpose, and the factors' work.
  if (splits(lanes))
    return 6 * n * l + std::max(rows_->scratch_size(cols_->size() * lanes),
                                cols_->scratch_size(rows_->size() * lanes));
  return 2 * n * l;
}

template <typename T>
void FftPlan<T>::Forward(const T* in_re, const T* in_im, int64_t in_stride, int64_t lanes,
                         T* out_re, T* out_im, T* scratch) const {
  if (inner_ != nullptr) {
    RunBluestein(in_re, in_im, in_stride, lanes, out_re, out_im, scratch);
  } else if (splits(lanes)) {
    RunSplit(in_re, in_im, in_stride, lanes, out_re, out_im, scratch);
  } else {
    RunStages(in_re, in_im, in_stride, lanes, out_re, out_im, scratch);
  }
}

template <typename T>
void FftPlan<T>::RunStages(const T* in_re, const T* in_im, int64_t in_stride, int64_t lanes,
                           T* out_re, T* out_im, T* work) const {
  const size_t count = stages_.size();
  if (count == 0) {  // n == 1
    ForEachPositionLane(0, 1, lanes, [&](int64_t, int64_t l) {
      out_re[l] = in_re[l];
      out_im[l] = in_im[l];
    });
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
void FftPlan<T>::RunSplit(const T* in_re, const T* in_im, int64_t in_stride, int64_t lanes,
                          T* out_re, T* out_im, T* scratch) const {
  // j = j1 * n2 + j2 and k = k1 + n1 * k2 give exp(-2*pi*i*j*k/n) = exp(-2*pi*i*j1*k1/n1) *
  // exp(-2*pi*i*j2*k1/n) * exp(-2*pi*i*j2*k2/n2).
  const int64_t n1 = rows_->size(), n2 = cols_->size(), size = n_ * lanes;
  T* packed_re = scratch;
  T* packed_im = packed_re + size;
  T* a_re = packed_im + size;
  T* a_im = a_re + size;
  T* b_re = a_im + size;
  T* b_im = b_re + size;
  T* work = b_im + size;
  // The rows' lanes are (j2, l): positions must be exactly `lanes` apart.
  if (in_stride != lanes) {
    ForEachPositionLane(0, n_, lanes, [&](int64_t j, int64_t l) {
      packed_re[j * lanes + l] = in_re[j * in_stride + l];
      packed_im[j * lanes + l] = in_im[j * in_stride + l];
    });
    in_re = packed_re;
    in_im = packed_im;
  }
  const int64_t row_lanes = n2 * lanes, col_lanes = n1 * lanes;
  rows_->Forward(in_re, in_im, row_lanes, row_lanes, a_re, a_im, work);
  // a[k1][j2][l] * exp(-2*pi*i*j2*k1/n) -> b[j2][k1][l]
  for (int64_t k1 = 0; k1 < n1; ++k1) {
    const T* wr = split_re_.data() + k1 * n2;
    const T* wi = split_im_.data() + k1 * n2;
    const T* ar = a_re + k1 * n2 * lanes;
    const T* ai = a_im + k1 * n2 * lanes;
    T* br = b_re + k1 * lanes;
    T* bi = b_im + k1 * lanes;
    ForEachPositionLane(0, n2, lanes, [&](int64_t j2, int64_t l) {
      const T xr = ar[j2 * lanes + l], xi = ai[j2 * lanes + l];
      br[j2 * col_lanes + l] = xr * wr[j2] - xi * wi[j2];
      bi[j2 * col_lanes + l] = xr * wi[j2] + xi * wr[j2];
    });
  }
  cols_->Forward(b_re, b_im, col_lanes, col_lanes, out_re, out_im, work);
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
  const T* cr = chirp_re_.data();
  const T* ci = chirp_im_.data();
  ForEachPositionLane(0, n_, lanes, [&](int64_t j, int64_t l) {
    const T xr = in_re[j * in_stride + l], xi = in_im[j * in_stride + l];
    a_re[j * lanes + l] = xr * cr[j] - xi * ci[j];
    a_im[j * lanes + l] = xr * ci[j] + xi * cr[j];
  });
  std::fill(a_re + n_ * lanes, a_re + m * lanes, T(0));
  std::fill(a_im + n_ * lanes, a_im + m * lanes, T(0));
  inner_->Forward(a_re, a_im, lanes, lanes, b_re, b_im, work);
  const T* kr = kernel_re_.data();
  const T* ki = kernel_im_.data();
  ForEachPositionLane(0, m, lanes, [&](int64_t k, int64_t l) {
    const T br = b_re[k * lanes + l], bi = b_im[k * lanes + l];
    b_re[k * lanes + l] = br * kr[k] - bi * ki[k];
    b_im[k * lanes + l] = br * ki[k] + bi * kr[k];
  });
  // The circular convolution, as the backward transform (kernel_ holds the 1/m) into a.
  inner_->Backward(b_re, b_im, lanes, lanes, a_re, a_im, work);
  ForEachPositionLane(0, n_, lanes, [&](int64_t k, int64_t l) {
    const T ar = a_re[k * lanes + l], ai = a_im[k * lanes + l];
    out_re[k * lanes + l] = ar * cr[k] - ai * ci[k];
    out_im[k * lanes + l] = ar * ci[k] + ai * cr[k];
  });
}

template class FftPlan<float>;
template class FftPlan<double>;

}  // namespace epctx::exec::kernels
