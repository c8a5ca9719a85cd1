// The butterfly stages of the mixed-radix FFT (fft_plan.h): one pass of a decimation-in-
// frequency Stockham transform over split real/imaginary arrays. Stockham needs no bit-reversal
// pass, and the inner loop of every stage runs over `count` contiguous elements (the lanes of
// a batch times the sequences earlier stages made), so it vectorises whenever the batch fills
// a vector register.
#pragma once

#include <cstdint>

// The inner loops read and write distinct arrays; without this GCC gives up on them (too many
// pointers for its runtime alias checks).
#if defined(__clang__)
#define EPCTX_FFT_VECTORIZE _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define EPCTX_FFT_VECTORIZE _Pragma("GCC ivdep")
#else
#define EPCTX_FFT_VECTORIZE
#endif

namespace epctx::exec::kernels {

// Calls body(j, l) for positions j in [begin, end) and lanes l in [0, lanes). With one lane it
// is a single loop over j, which the compiler vectorises; a loop of one lane inside would not
// be, and would cost its control on every element.
template <typename Body>
inline void ForEachPositionLane(int64_t begin, int64_t end, int64_t lanes, Body&& body) {
  if (lanes == 1) {
    EPCTX_FFT_VECTORIZE
    for (int64_t j = begin; j < end; ++j) body(j, int64_t{0});
    return;
  }
  for (int64_t j = begin; j < end; ++j) {
    EPCTX_FFT_VECTORIZE
    for (int64_t l = 0; l < lanes; ++l) body(j, l);
  }
}

// One stage of radix p on a transform whose remaining sub-length is p * m. Input element
// (position i, element t) is x[i * x_stride + t] for i in [0, p * m) and t in [0, count); the
// output of butterfly j, frequency k is y[(j * p + k) * count + t], multiplied by the twiddle
// exp(-2*pi*i*j*k / (p*m)) stored at tw[j * (p - 1) + k - 1]. x and y must not overlap.
template <typename T>
struct FftStage {
  const T* x_re;
  const T* x_im;
  int64_t x_stride;
  T* y_re;
  T* y_im;
  int64_t count;
  int64_t m;
  const T* tw_re;
  const T* tw_im;
};

// kCount > 0: the stage is compiled for s.count == kCount (the first stage of a full batch,
// whose inner loop is then one vector operation without loop control); 0: any count.
template <typename T, int kCount>
void FftRadix2Stage(const FftStage<T>& s);
template <typename T, int kCount>
void FftRadix3Stage(const FftStage<T>& s);
template <typename T, int kCount>
void FftRadix4Stage(const FftStage<T>& s);
template <typename T, int kCount>
void FftRadix5Stage(const FftStage<T>& s);
// Any odd p, in O(p^2) per butterfly; cos_p and sin_p hold cos(2*pi*t/p) and sin(2*pi*t/p)
// for t in [0, p).
template <typename T>
void FftOddRadixStage(const FftStage<T>& s, int p, const T* cos_p, const T* sin_p);

}  // namespace epctx::exec::kernels
