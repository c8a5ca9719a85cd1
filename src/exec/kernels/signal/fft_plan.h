// A complex FFT of one length, computed in the element type (float or double) on a batch of
// independent sequences at once. The plan (factorisation, twiddle tables, Bluestein's chirp)
// is built once and then only read, so threads share it.
//
// Lengths whose prime factors are all at most kMaxOddRadix run as a mixed-radix Stockham FFT
// (radix 4, 2, 3, 5, then the larger odd primes); any other length runs Bluestein's algorithm,
// a circular convolution computed by two transforms of a length m >= 2n - 1 whose prime factors
// are 2, 3 and 5.
//
// Data are split into real and imaginary arrays, and a batch is stored position-major: element
// j of sequence (lane) l is at [j * stride + l]. Lanes fill the vector registers, so every
// stage's inner loop vectorises even on the first stage. A batch of fewer lanes than a register
// on a length of at least kMinSplitLength is computed as n = n1 * n2: n2 * lanes transforms of
// length n1, a twiddled transpose, and n1 * lanes transforms of length n2 (the "six-step" FFT),
// so that the inner loops still run over many lanes.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "epctx/status.h"
#include "exec/kernels/signal/unit_roots.h"

namespace epctx::exec::kernels {

// Longest transform accepted. The length may come from a small input (dft_length), and the
// tables and work buffers take tens of bytes per point.
inline constexpr int64_t kMaxFftLength = int64_t{1} << 20;
// Largest odd prime factor done by a direct butterfly; lengths with a larger one use Bluestein.
inline constexpr int kMaxOddRadix = 23;
// Shortest length computed in two factors when a batch has few lanes.
inline constexpr int64_t kMinSplitLength = 128;

// kInvalidArgument "DFT length {n} is outside [1, kMaxFftLength]" for a length no plan takes.
Status CheckFftLength(int64_t n);

template <typename T>
class FftPlan {
 public:
  // kInvalidArgument when n is outside [1, kMaxFftLength]. `roots`, when given, holds the
  // roots of unity of a multiple of n, read instead of computing n's.
  static Result<std::unique_ptr<const FftPlan>> Create(int64_t n, const UnitRoots* roots = nullptr);

  int64_t size() const { return n_; }
  bool uses_bluestein() const { return inner_ != nullptr; }
  // Whether a batch of `lanes` lanes is computed in two factors.
  bool splits(int64_t lanes) const;
  // Elements of T that Forward needs as scratch for `lanes` lanes.
  size_t scratch_size(int64_t lanes) const;

  // out[k] = sum_j in[j] * exp(-2*pi*i*j*k/n) for each of `lanes` sequences. Input element j of
  // lane l is at in_re/in_im[j * in_stride + l] (in_stride >= lanes); the output is packed,
  // at out_re/out_im[k * lanes + l]. The input must not overlap the output or the scratch.
  void Forward(const T* in_re, const T* in_im, int64_t in_stride, int64_t lanes, T* out_re,
               T* out_im, T* scratch) const;
  // The same sum with exp(+2*pi*i*j*k/n), unscaled: the forward transform with real and
  // imaginary parts swapped on the way in and out.
  void Backward(const T* in_re, const T* in_im, int64_t in_stride, int64_t lanes, T* out_re,
                T* out_im, T* scratch) const {
    Forward(in_im, in_re, in_stride, lanes, out_im, out_re, scratch);
  }

 private:
  struct Stage {
    int radix = 0;
    int64_t m = 0;         // sub-transform length after the stage
    size_t twiddles = 0;   // offset of the stage's table in twiddle_re_/twiddle_im_
    size_t odd_radix = 0;  // offset of cos/sin(2*pi*t/radix) in odd_cos_/odd_sin_
  };
  // The float plan computes Bluestein's kernel with a double plan.
  template <typename U>
  friend class FftPlan;

  FftPlan() = default;
  // Create without the length limit (Bluestein's inner length may exceed it); `may_split`:
  // whether few lanes may take two factors (not for the factors' own plans).
  static std::unique_ptr<FftPlan> Build(int64_t n, bool may_split, const UnitRoots* roots);
  // The stages of `radices`, and with `split` the two factors for few lanes.
  void BuildStages(const std::vector<int>& radices, bool split, const UnitRoots& roots);
  void BuildBluestein();
  void RunStages(const T* in_re, const T* in_im, int64_t in_stride, int64_t lanes, T* out_re,
                 T* out_im, T* work) const;
  void RunSplit(const T* in_re, const T* in_im, int64_t in_stride, int64_t lanes, T* out_re,
                T* out_im, T* scratch) const;
  void RunBluestein(const T* in_re, const T* in_im, int64_t in_stride, int64_t lanes, T* out_re,
                    T* out_im, T* scratch) const;

  int64_t n_ = 0;
  std::vector<Stage> stages_;
  std::vector<T> twiddle_re_, twiddle_im_;
  std::vector<T> odd_cos_, odd_sin_;
  // Split: the plans of n1 (rows) and n2 (columns), and exp(-2*pi*i*k1*j2/n) at [k1 * n2 + j2].
  std::unique_ptr<FftPlan> rows_, cols_;
  std::vector<T> split_re_, split_im_;
  // Bluestein: the transform of the padded length, the chirp exp(-pi*i*j^2/n) for j < n, and
  // the forward transform of the conjugate chirp laid out circularly, divided by m.
  std::unique_ptr<FftPlan> inner_;
  std::vector<T> chirp_re_, chirp_im_;
  std::vector<T> kernel_re_, kernel_im_;
};

extern template class FftPlan<float>;
extern template class FftPlan<double>;

}  // namespace epctx::exec::kernels
