#include "exec/kernels/signal/fft_f64.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// Below this length a non-power-of-two transform is cheaper done directly than by Bluestein's
// three padded transforms.
constexpr int64_t kMaxDirectLength = 64;

bool IsPowerOfTwo(int64_t n) {
  return (n & (n - 1)) == 0;
}

// exp(i * pi * num / den), with num reduced first so that large angles keep their precision.
FftF64::Complex UnitRoot(int64_t num, int64_t den) {
  const double angle = std::numbers::pi * static_cast<double>(num) / static_cast<double>(den);
  return {std::cos(angle), std::sin(angle)};
}

std::vector<FftF64::Complex> Pow2Twiddles(int64_t m) {
  std::vector<FftF64::Complex> w(static_cast<size_t>(m / 2));
  for (int64_t k = 0; k < m / 2; ++k) w[static_cast<size_t>(k)] = UnitRoot(-2 * k, m);
  return w;
}

}  // namespace

Result<FftF64> FftF64::Create(int64_t n, bool inverse) {
  if (n < 1 || n > kMaxFftLength) {
    return EPCTX_ERROR(kInvalidArgument, "DFT length {} is outside [1, {}]", n, kMaxFftLength);
  }
  FftF64 plan;
  plan.n_ = n;
  plan.inverse_ = inverse;
  const int64_t sign = inverse ? 1 : -1;
  if (IsPowerOfTwo(n)) {
    plan.method_ = Method::kRadix2;
    plan.pow2_twiddle_ = Pow2Twiddles(n);
  } else if (n <= kMaxDirectLength) {
    plan.method_ = Method::kDirect;
    plan.direct_twiddle_.resize(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t)
      plan.direct_twiddle_[static_cast<size_t>(t)] = UnitRoot(sign * 2 * t, n);
  } else {
    // j*k = (j^2 + k^2 - (k-j)^2) / 2 turns the DFT into a convolution with a chirp.
    plan.method_ = Method::kBluestein;
    int64_t m = 1;
    while (m < 2 * n - 1) m *= 2;
    plan.pow2_twiddle_ = Pow2Twiddles(m);
    plan.chirp_.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      // j^2 mod 2n keeps the angle small; n <= kMaxFftLength keeps j*j within int64.
      plan.chirp_[static_cast<size_t>(j)] = UnitRoot(sign * ((j * j) % (2 * n)), n);
    }
    plan.bluestein_b_.assign(static_cast<size_t>(m), Complex(0, 0));
    for (int64_t j = 0; j < n; ++j) {
      const Complex c = std::conj(plan.chirp_[static_cast<size_t>(j)]);
      plan.bluestein_b_[static_cast<size_t>(j)] = c;
      if (j > 0) plan.bluestein_b_[static_cast<size_t>(m - j)] = c;
    }
    plan.Radix2(plan.bluestein_b_.data());
  }
  return plan;
}

void FftF64::Radix2(Complex* data) const {
  const int64_t m = static_cast<int64_t>(pow2_twiddle_.size()) * 2;
  if (m < 2) return;
  for (int64_t i = 1, j = 0; i < m; ++i) {
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(data[i], data[j]);
  }
  for (int64_t len = 2; len <= m; len *= 2) {
    const int64_t half = len / 2, step = m / len;
    for (int64_t start = 0; start < m; start += len) {
      for (int64_t k = 0; k < half; ++k) {
        const Complex t = data[start + k + half] * pow2_twiddle_[static_cast<size_t>(k * step)];
        data[start + k + half] = data[start + k] - t;
        data[start + k] += t;
      }
    }
  }
}

void FftF64::Run(const Complex* in, Complex* out, Complex* scratch) const {
  switch (method_) {
    case Method::kRadix2:
      // The inverse transform is the conjugate of the forward transform of the conjugate.
      for (int64_t i = 0; i < n_; ++i) out[i] = inverse_ ? std::conj(in[i]) : in[i];
      Radix2(out);
      if (inverse_) {
        for (int64_t i = 0; i < n_; ++i) out[i] = std::conj(out[i]);
      }
      return;
    case Method::kDirect:
      for (int64_t k = 0; k < n_; ++k) {
        Complex acc(0, 0);
        for (int64_t j = 0, t = 0; j < n_; ++j, t = (t + k) % n_) {
          acc += in[j] * direct_twiddle_[static_cast<size_t>(t)];
        }
        out[k] = acc;
      }
      return;
    case Method::kBluestein: {
      const int64_t m = static_cast<int64_t>(bluestein_b_.size());
      for (int64_t j = 0; j < n_; ++j) scratch[j] = in[j] * chirp_[static_cast<size_t>(j)];
      std::fill(scratch + n_, scratch + m, Complex(0, 0));
      Radix2(scratch);
      // Pointwise product, then the inverse transform as conj(forward(conj(.))).
      for (int64_t i = 0; i < m; ++i) {
        scratch[i] = std::conj(scratch[i] * bluestein_b_[static_cast<size_t>(i)]);
      }
      Radix2(scratch);
      const double scale = 1.0 / static_cast<double>(m);
      for (int64_t k = 0; k < n_; ++k) {
        out[k] = std::conj(scratch[k]) * scale * chirp_[static_cast<size_t>(k)];
      }
      return;
    }
  }
}

}  // namespace epctx::exec::kernels
