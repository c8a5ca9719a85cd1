#include "exec/kernels/signal/lane_transpose.h"

#include <utility>

namespace epctx::exec::kernels {
namespace {

// Whether W elements of T fit one register (wider vectors would be split and spilled).
template <typename T, int W>
constexpr bool Fits() {
  return W * sizeof(T) <= kSignalVectorBytes;
}

// The shuffles below compile to the target's permutes (one two-source permute each with
// AVX-512).

// Element c of the result: a[c] where bit H of c is clear, else b[c - H].
template <int H, typename V, size_t... C>
V KeepLowSwapHigh(V a, V b, std::index_sequence<C...>) {
  constexpr int W = sizeof...(C);
  return __builtin_shufflevector(a, b, ((C & H) ? W + C - H : C)...);
}

// Element c of the result: a[c + H] where bit H of c is clear, else b[c].
template <int H, typename V, size_t... C>
V TakeHighKeepLow(V a, V b, std::index_sequence<C...>) {
  constexpr int W = sizeof...(C);
  return __builtin_shufflevector(a, b, ((C & H) ? W + C : C + H)...);
}

// Transposes the W x W matrix whose rows are r[0..W): each step swaps the off-diagonal H x H
// blocks of every 2H x 2H block.
template <int W, int H, typename V>
void Transpose(V* r) {
  if constexpr (H >= 1) {
    for (int i = 0; i < W; ++i) {
      if ((i & H) != 0) continue;
      const V a = r[i], b = r[i + H];
      r[i] = KeepLowSwapHigh<H>(a, b, std::make_index_sequence<W>());
      r[i + H] = TakeHighKeepLow<H>(a, b, std::make_index_sequence<W>());
    }
    Transpose<W, H / 2>(r);
  }
}

// (a0, b0, a1, b1, ...) from the first (Half = 0) or second (Half = W/2) halves of a and b.
template <int Half, typename V, size_t... C>
V Interleave(V a, V b, std::index_sequence<C...>) {
  constexpr int W = sizeof...(C);
  return __builtin_shufflevector(a, b, ((C % 2 == 0) ? Half + C / 2 : W + Half + C / 2)...);
}

template <typename T>
void LoadLanesScalar(const T* const* src, int64_t src_stride, const T* scale, int64_t begin,
                     int64_t n, int64_t lanes, T* dst) {
  for (int64_t l = 0; l < lanes; ++l) {
    for (int64_t j = begin; j < n; ++j) {
      const T v = src[l][j * src_stride];
      dst[j * lanes + l] = scale != nullptr ? v * scale[j] : v;
    }
  }
}

template <typename T, int W>
void LoadLanesBlocks(const T* const* src, const T* scale, int64_t n, T* dst) {
  using V = typename VecOf<T, W>::type;
  int64_t j = 0;
  for (; j + W <= n; j += W) {
    V r[W];
    for (int l = 0; l < W; ++l) r[l] = LoadVec<V>(src[l] + j);
    if (scale != nullptr) {
      const V s = LoadVec<V>(scale + j);
      for (int l = 0; l < W; ++l) r[l] *= s;
    }
    Transpose<W, W / 2>(r);
    for (int p = 0; p < W; ++p) StoreVec(dst + (j + p) * W, r[p]);
  }
  LoadLanesScalar(src, 1, scale, j, n, W, dst);
}

template <typename T>
void StoreLanesScalar(const T* re, const T* im, T re_scale, T im_scale, int64_t begin, int64_t bins,
                      int64_t lanes, T* const* dst, int64_t dst_stride) {
  for (int64_t l = 0; l < lanes; ++l) {
    for (int64_t k = begin; k < bins; ++k) {
      dst[l][k * dst_stride] = re[k * lanes + l] * re_scale;
      dst[l][k * dst_stride + 1] = im[k * lanes + l] * im_scale;
    }
  }
}

template <typename T, int W>
void StoreLanesBlocks(const T* re, const T* im, T re_scale, T im_scale, int64_t bins,
                      T* const* dst) {
  using V = typename VecOf<T, W>::type;
  int64_t k = 0;
  for (; k + W <= bins; k += W) {
    V r[W], q[W];
    for (int p = 0; p < W; ++p) {
      r[p] = LoadVec<V>(re + (k + p) * W) * re_scale;
      q[p] = LoadVec<V>(im + (k + p) * W) * im_scale;
    }
    Transpose<W, W / 2>(r);
    Transpose<W, W / 2>(q);
    for (int l = 0; l < W; ++l) {
      StoreVec(dst[l] + 2 * k, Interleave<0>(r[l], q[l], std::make_index_sequence<W>()));
      StoreVec(dst[l] + 2 * k + W, Interleave<W / 2>(r[l], q[l], std::make_index_sequence<W>()));
    }
  }
  StoreLanesScalar(re, im, re_scale, im_scale, k, bins, W, dst, 2);
}

}  // namespace

template <typename T>
void LoadLanes(const T* const* src, int64_t src_stride, const T* scale, int64_t n, int64_t lanes,
               T* dst) {
  if (src_stride == 1) {
    if constexpr (Fits<T, 16>()) {
      if (lanes == 16) return LoadLanesBlocks<T, 16>(src, scale, n, dst);
    }
    if constexpr (Fits<T, 8>()) {
      if (lanes == 8) return LoadLanesBlocks<T, 8>(src, scale, n, dst);
    }
    if (lanes == 4) return LoadLanesBlocks<T, 4>(src, scale, n, dst);
  }
  LoadLanesScalar(src, src_stride, scale, 0, n, lanes, dst);
}

template <typename T>
void StoreLanes(const T* re, const T* im, T re_scale, T im_scale, int64_t bins, int64_t lanes,
                T* const* dst, int64_t dst_stride) {
  if (dst_stride == 2) {
    if constexpr (Fits<T, 16>()) {
      if (lanes == 16) return StoreLanesBlocks<T, 16>(re, im, re_scale, im_scale, bins, dst);
    }
    if constexpr (Fits<T, 8>()) {
      if (lanes == 8) return StoreLanesBlocks<T, 8>(re, im, re_scale, im_scale, bins, dst);
    }
    if (lanes == 4) return StoreLanesBlocks<T, 4>(re, im, re_scale, im_scale, bins, dst);
  }
  StoreLanesScalar(re, im, re_scale, im_scale, 0, bins, lanes, dst, dst_stride);
}

template void LoadLanes<float>(const float* const*, int64_t, const float*, int64_t, int64_t,
                               float*);
template void LoadLanes<double>(const double* const*, int64_t, const double*, int64_t, int64_t,
                                double*);
template void StoreLanes<float>(const float*, const float*, float, float, int64_t, int64_t,
                                float* const*, int64_t);
template void StoreLanes<double>(const double*, const double*, double, double, int64_t, int64_t,
                                 double* const*, int64_t);

}  // namespace epctx::exec::kernels
