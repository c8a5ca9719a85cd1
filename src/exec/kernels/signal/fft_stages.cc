// Radix-2, 3, 4 and 5 butterflies written out, and a generic odd radix. All are forward
// transforms (exp(-2*pi*i*...)); the plan gets the inverse by swapping real and imaginary parts.
#include "exec/kernels/signal/fft_stages.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <type_traits>

#include "exec/kernels/signal/vector_width.h"

namespace epctx::exec::kernels {
namespace {

// Where butterfly j reads position r and writes frequency k.
template <typename T>
struct Ports {
  const T* x_re;
  const T* x_im;
  T* y_re;
  T* y_im;
};

template <typename T>
Ports<T> At(const FftStage<T>& s, int64_t count, int p, int64_t j, int r, int k) {
  const int64_t x = (j + r * s.m) * s.x_stride;
  const int64_t y = (j * p + k) * count;
  return {s.x_re + x, s.x_im + x, s.y_re + y, s.y_im + y};
}

// The element of a stage's inner loop: T, or for a stage compiled for a count of kCount
// (one register), a vector of kCount T, so that the loop is a single iteration of vector
// code (left to itself, GCC unrolls such a short loop into scalar code).
template <typename T, int kCount>
struct StageElement {
  using type = typename VecOf<T, kCount>::type;
};
template <typename T>
struct StageElement<T, 0> {
  using type = T;
};

template <typename T, int kCount>
int64_t StageIterations(const FftStage<T>& s) {
  return kCount == 0 ? s.count : 1;
}

// Element t of an array of E laid over an array of T.
template <typename E, typename T>
E Get(const T* p, int64_t t) {
  if constexpr (std::is_same_v<E, T>) {
    return p[t];
  } else {
    return LoadVec<E>(p + t * static_cast<int64_t>(sizeof(E) / sizeof(T)));
  }
}

template <typename E, typename T>
void Put(T* p, int64_t t, const E& v) {
  if constexpr (std::is_same_v<E, T>) {
    p[t] = v;
  } else {
    StoreVec(p + t * static_cast<int64_t>(sizeof(E) / sizeof(T)), v);
  }
}

// Writes (br + i*bi) * (wr + i*wi), the butterfly's output k turned by its twiddle, to k's port.
template <typename E, typename T>
void PutRotated(const Ports<T>& port, int64_t t, const E& br, const E& bi, T wr, T wi) {
  Put<E>(port.y_re, t, br * wr - bi * wi);
  Put<E>(port.y_im, t, br * wi + bi * wr);
}

}  // namespace

template <typename T, int kCount>
void FftRadix2Stage(const FftStage<T>& s) {
  using E = typename StageElement<T, kCount>::type;
  const int64_t count = kCount > 0 ? kCount : s.count;
  const int64_t iterations = StageIterations<T, kCount>(s);
  for (int64_t j = 0; j < s.m; ++j) {
    const Ports<T> p0 = At(s, count, 2, j, 0, 0), p1 = At(s, count, 2, j, 1, 1);
    const T wr = s.tw_re[j], wi = s.tw_im[j];
    EPCTX_FFT_VECTORIZE
    for (int64_t t = 0; t < iterations; ++t) {
      const E ar = Get<E>(p0.x_re, t), ai = Get<E>(p0.x_im, t), br = Get<E>(p1.x_re, t),
              bi = Get<E>(p1.x_im, t);
      Put<E>(p0.y_re, t, ar + br);
      Put<E>(p0.y_im, t, ai + bi);
      const E dr = ar - br, di = ai - bi;
      PutRotated<E>(p1, t, dr, di, wr, wi);
    }
  }
}

template <typename T, int kCount>
void FftRadix3Stage(const FftStage<T>& s) {
  using E = typename StageElement<T, kCount>::type;
  const int64_t count = kCount > 0 ? kCount : s.count;
  const int64_t iterations = StageIterations<T, kCount>(s);
  // exp(-2*pi*i/3) = -1/2 - i*sqrt(3)/2
  const T h = static_cast<T>(std::numbers::sqrt3_v<long double> / 2);
  for (int64_t j = 0; j < s.m; ++j) {
    const Ports<T> p0 = At(s, count, 3, j, 0, 0), p1 = At(s, count, 3, j, 1, 1),
                   p2 = At(s, count, 3, j, 2, 2);
    const T w1r = s.tw_re[2 * j], w1i = s.tw_im[2 * j];
    const T w2r = s.tw_re[2 * j + 1], w2i = s.tw_im[2 * j + 1];
    EPCTX_FFT_VECTORIZE
    for (int64_t t = 0; t < iterations; ++t) {
      const E a0r = Get<E>(p0.x_re, t), a0i = Get<E>(p0.x_im, t);
      const E sr = Get<E>(p1.x_re, t) + Get<E>(p2.x_re, t),
              si = Get<E>(p1.x_im, t) + Get<E>(p2.x_im, t);
      const E dr = Get<E>(p1.x_re, t) - Get<E>(p2.x_re, t),
              di = Get<E>(p1.x_im, t) - Get<E>(p2.x_im, t);
      Put<E>(p0.y_re, t, a0r + sr);
      Put<E>(p0.y_im, t, a0i + si);
      const E mr = a0r - T(0.5) * sr, mi = a0i - T(0.5) * si;
      // b1 = m - i*h*d, b2 = m + i*h*d
      const E b1r = mr + h * di, b1i = mi - h * dr;
      const E b2r = mr - h * di, b2i = mi + h * dr;
      PutRotated<E>(p1, t, b1r, b1i, w1r, w1i);
      PutRotated<E>(p2, t, b2r, b2i, w2r, w2i);
    }
  }
}

template <typename T, int kCount>
void FftRadix4Stage(const FftStage<T>& s) {
  using E = typename StageElement<T, kCount>::type;
  const int64_t count = kCount > 0 ? kCount : s.count;
  const int64_t iterations = StageIterations<T, kCount>(s);
  for (int64_t j = 0; j < s.m; ++j) {
    const Ports<T> p0 = At(s, count, 4, j, 0, 0), p1 = At(s, count, 4, j, 1, 1);
    const Ports<T> p2 = At(s, count, 4, j, 2, 2), p3 = At(s, count, 4, j, 3, 3);
    const T w1r = s.tw_re[3 * j], w1i = s.tw_im[3 * j];
    const T w2r = s.tw_re[3 * j + 1], w2i = s.tw_im[3 * j + 1];
    const T w3r = s.tw_re[3 * j + 2], w3i = s.tw_im[3 * j + 2];
    EPCTX_FFT_VECTORIZE
    for (int64_t t = 0; t < iterations; ++t) {
      const E s02r = Get<E>(p0.x_re, t) + Get<E>(p2.x_re, t),
              s02i = Get<E>(p0.x_im, t) + Get<E>(p2.x_im, t);
      const E d02r = Get<E>(p0.x_re, t) - Get<E>(p2.x_re, t),
              d02i = Get<E>(p0.x_im, t) - Get<E>(p2.x_im, t);
      const E s13r = Get<E>(p1.x_re, t) + Get<E>(p3.x_re, t),
              s13i = Get<E>(p1.x_im, t) + Get<E>(p3.x_im, t);
      const E d13r = Get<E>(p1.x_re, t) - Get<E>(p3.x_re, t),
              d13i = Get<E>(p1.x_im, t) - Get<E>(p3.x_im, t);
      Put<E>(p0.y_re, t, s02r + s13r);
      Put<E>(p0.y_im, t, s02i + s13i);
      // b1 = d02 - i*d13, b2 = s02 - s13, b3 = d02 + i*d13
      const E b1r = d02r + d13i, b1i = d02i - d13r;
      const E b2r = s02r - s13r, b2i = s02i - s13i;
      const E b3r = d02r - d13i, b3i = d02i + d13r;
      PutRotated<E>(p1, t, b1r, b1i, w1r, w1i);
      PutRotated<E>(p2, t, b2r, b2i, w2r, w2i);
      PutRotated<E>(p3, t, b3r, b3i, w3r, w3i);
    }
  }
}

template <typename T, int kCount>
void FftRadix5Stage(const FftStage<T>& s) {
  using E = typename StageElement<T, kCount>::type;
  const int64_t count = kCount > 0 ? kCount : s.count;
  const int64_t iterations = StageIterations<T, kCount>(s);
  const long double a = 2 * std::numbers::pi_v<long double> / 5;
  const T c1 = static_cast<T>(std::cos(a)), c2 = static_cast<T>(std::cos(2 * a));
  const T s1 = static_cast<T>(std::sin(a)), s2 = static_cast<T>(std::sin(2 * a));
  for (int64_t j = 0; j < s.m; ++j) {
    const Ports<T> p0 = At(s, count, 5, j, 0, 0), p1 = At(s, count, 5, j, 1, 1),
                   p2 = At(s, count, 5, j, 2, 2);
    const Ports<T> p3 = At(s, count, 5, j, 3, 3), p4 = At(s, count, 5, j, 4, 4);
    const T* wr = s.tw_re + 4 * j;
    const T* wi = s.tw_im + 4 * j;
    const T w1r = wr[0], w1i = wi[0], w2r = wr[1], w2i = wi[1];
    const T w3r = wr[2], w3i = wi[2], w4r = wr[3], w4i = wi[3];
    EPCTX_FFT_VECTORIZE
    for (int64_t t = 0; t < iterations; ++t) {
      const E a0r = Get<E>(p0.x_re, t), a0i = Get<E>(p0.x_im, t);
      const E s14r = Get<E>(p1.x_re, t) + Get<E>(p4.x_re, t),
              s14i = Get<E>(p1.x_im, t) + Get<E>(p4.x_im, t);
      const E d14r = Get<E>(p1.x_re, t) - Get<E>(p4.x_re, t),
              d14i = Get<E>(p1.x_im, t) - Get<E>(p4.x_im, t);
      const E s23r = Get<E>(p2.x_re, t) + Get<E>(p3.x_re, t),
              s23i = Get<E>(p2.x_im, t) + Get<E>(p3.x_im, t);
      const E d23r = Get<E>(p2.x_re, t) - Get<E>(p3.x_re, t),
              d23i = Get<E>(p2.x_im, t) - Get<E>(p3.x_im, t);
      Put<E>(p0.y_re, t, a0r + s14r + s23r);
      Put<E>(p0.y_im, t, a0i + s14i + s23i);
      const E u1r = a0r + c1 * s14r + c2 * s23r, u1i = a0i + c1 * s14i + c2 * s23i;
      const E u2r = a0r + c2 * s14r + c1 * s23r, u2i = a0i + c2 * s14i + c1 * s23i;
      const E v1r = s1 * d14r + s2 * d23r, v1i = s1 * d14i + s2 * d23i;
      const E v2r = s2 * d14r - s1 * d23r, v2i = s2 * d14i - s1 * d23i;
      // b1 = u1 - i*v1, b4 = u1 + i*v1, b2 = u2 - i*v2, b3 = u2 + i*v2
      const E b1r = u1r + v1i, b1i = u1i - v1r, b4r = u1r - v1i, b4i = u1i + v1r;
      const E b2r = u2r + v2i, b2i = u2i - v2r, b3r = u2r - v2i, b3i = u2i + v2r;
      PutRotated<E>(p1, t, b1r, b1i, w1r, w1i);
      PutRotated<E>(p2, t, b2r, b2i, w2r, w2i);
      PutRotated<E>(p3, t, b3r, b3i, w3r, w3i);
      PutRotated<E>(p4, t, b4r, b4i, w4r, w4i);
    }
  }
}

template <typename T>
void FftOddRadixStage(const FftStage<T>& s, int p, const T* cos_p, const T* sin_p) {
  const int64_t count = s.count;
  // Blocks of the inner loop short enough for the partial sums to stay in L1.
  constexpr int64_t kBlock = 64;
  T ur[kBlock], ui[kBlock], vr[kBlock], vi[kBlock];
  const int half = (p - 1) / 2;
  for (int64_t j = 0; j < s.m; ++j) {
    for (int64_t t0 = 0; t0 < count; t0 += kBlock) {
      const int64_t len = std::min(kBlock, count - t0);
      const Ports<T> p0 = At(s, count, p, j, 0, 0);
      T* y0r = p0.y_re + t0;
      T* y0i = p0.y_im + t0;
      for (int64_t t = 0; t < len; ++t) {
        y0r[t] = p0.x_re[t0 + t];
        y0i[t] = p0.x_im[t0 + t];
      }
      for (int r = 1; r < p; ++r) {
        const Ports<T> pr = At(s, count, p, j, r, 0);
        EPCTX_FFT_VECTORIZE
        for (int64_t t = 0; t < len; ++t) {
          y0r[t] += pr.x_re[t0 + t];
          y0i[t] += pr.x_im[t0 + t];
        }
      }
      for (int k = 1; k <= half; ++k) {
        // b_k = u - i*v and b_{p-k} = u + i*v, where u sums cos * (a_r + a_{p-r}) and v sums
        // sin * (a_r - a_{p-r}) over r in [1, half].
        for (int64_t t = 0; t < len; ++t) {
          ur[t] = p0.x_re[t0 + t];
          ui[t] = p0.x_im[t0 + t];
          vr[t] = 0;
          vi[t] = 0;
        }
        for (int r = 1; r <= half; ++r) {
          const Ports<T> pa = At(s, count, p, j, r, 0), pb = At(s, count, p, j, p - r, 0);
          const T c = cos_p[(r * k) % p], sn = sin_p[(r * k) % p];
          EPCTX_FFT_VECTORIZE
          for (int64_t t = 0; t < len; ++t) {
            const T ar = pa.x_re[t0 + t], ai = pa.x_im[t0 + t];
            const T br = pb.x_re[t0 + t], bi = pb.x_im[t0 + t];
            ur[t] += c * (ar + br);
            ui[t] += c * (ai + bi);
            vr[t] += sn * (ar - br);
            vi[t] += sn * (ai - bi);
          }
        }
        const Ports<T> pk = At(s, count, p, j, 0, k), pm = At(s, count, p, j, 0, p - k);
        const T wkr = s.tw_re[j * (p - 1) + k - 1], wki = s.tw_im[j * (p - 1) + k - 1];
        const T wmr = s.tw_re[j * (p - 1) + p - k - 1], wmi = s.tw_im[j * (p - 1) + p - k - 1];
        EPCTX_FFT_VECTORIZE
        for (int64_t t = 0; t < len; ++t) {
          const T bkr = ur[t] + vi[t], bki = ui[t] - vr[t];
          const T bmr = ur[t] - vi[t], bmi = ui[t] + vr[t];
          pk.y_re[t0 + t] = bkr * wkr - bki * wki;
          pk.y_im[t0 + t] = bkr * wki + bki * wkr;
          pm.y_re[t0 + t] = bmr * wmr - bmi * wmi;
          pm.y_im[t0 + t] = bmr * wmi + bmi * wmr;
        }
      }
    }
  }
}

template void FftRadix2Stage<float, 0>(const FftStage<float>&);
template void FftRadix2Stage<float, kMaxLanes<float>>(const FftStage<float>&);
template void FftRadix2Stage<double, 0>(const FftStage<double>&);
template void FftRadix2Stage<double, kMaxLanes<double>>(const FftStage<double>&);
template void FftRadix3Stage<float, 0>(const FftStage<float>&);
template void FftRadix3Stage<float, kMaxLanes<float>>(const FftStage<float>&);
template void FftRadix3Stage<double, 0>(const FftStage<double>&);
template void FftRadix3Stage<double, kMaxLanes<double>>(const FftStage<double>&);
template void FftRadix4Stage<float, 0>(const FftStage<float>&);
template void FftRadix4Stage<float, kMaxLanes<float>>(const FftStage<float>&);
template void FftRadix4Stage<double, 0>(const FftStage<double>&);
template void FftRadix4Stage<double, kMaxLanes<double>>(const FftStage<double>&);
template void FftRadix5Stage<float, 0>(const FftStage<float>&);
template void FftRadix5Stage<float, kMaxLanes<float>>(const FftStage<float>&);
template void FftRadix5Stage<double, 0>(const FftStage<double>&);
template void FftRadix5Stage<double, kMaxLanes<double>>(const FftStage<double>&);
template void FftOddRadixStage<float>(const FftStage<float>&, int, const float*, const float*);
template void FftOddRadixStage<double>(const FftStage<double>&, int, const double*, const double*);

}  // namespace epctx::exec::kernels
