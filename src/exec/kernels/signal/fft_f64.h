// A one-dimensional complex DFT of fixed length in double precision, shared by DFT and STFT.
// Double keeps the error of long sums well inside float32 tolerances whatever the length.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include "epctx/status.h"

namespace epctx::exec::kernels {

// Longest transform accepted. The length may come from a small input (dft_length), and the
// twiddle tables and Bluestein's padded buffers take over 100 bytes per point.
inline constexpr int64_t kMaxFftLength = int64_t{1} << 20;

class FftF64 {
 public:
  using Complex = std::complex<double>;

  // Plan for out[k] = sum_j in[j] * exp(-+2*pi*i*j*k/n) (the sign is + when `inverse`), without
  // the 1/n scaling. kInvalidArgument when n is outside [1, kMaxFftLength].
  static Result<FftF64> Create(int64_t n, bool inverse);

  int64_t size() const { return n_; }
  // Complex elements of scratch that Run needs.
  size_t scratch_size() const { return bluestein_b_.size(); }
  // `in` and `out` hold size() elements each and must not overlap.
  void Run(const Complex* in, Complex* out, Complex* scratch) const;

 private:
  FftF64() = default;
  // In-place forward radix-2 transform of pow2_twiddle_.size() * 2 elements.
  void Radix2(Complex* data) const;

  int64_t n_ = 0;
  bool inverse_ = false;
  enum class Method { kRadix2, kDirect, kBluestein } method_ = Method::kDirect;
  // kDirect: exp(-+2*pi*i*t/n) for t in [0, n).
  std::vector<Complex> direct_twiddle_;
  // The forward power-of-two transform (of n, or of Bluestein's padded length m):
  // exp(-2*pi*i*k/m) for k in [0, m/2).
  std::vector<Complex> pow2_twiddle_;
  // kBluestein: the chirp exp(-+pi*i*j^2/n) for j in [0, n), and the forward transform of its
  // conjugate laid out for a circular convolution of length m.
  std::vector<Complex> chirp_;
  std::vector<Complex> bluestein_b_;
};

}  // namespace epctx::exec::kernels
