// LoadLanes and StoreLanes (signal/lane_transpose.h) against their element-by-element
// definitions, exactly, for every lane count up to 16, both strides (the register transposes
// and the loops), and lengths with and without a partial last block.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "exec/kernels/signal/lane_transpose.h"

namespace epctx::exec::kernels {
namespace {

// Distinct values, exactly representable in float: a misplaced element cannot go unnoticed.
template <typename T>
std::vector<T> Iota(size_t count, T start) {
  std::vector<T> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = start + static_cast<T>(i);
  return v;
}

template <typename T>
void CheckLoad(int64_t lanes, int64_t n, int64_t stride, bool scaled) {
  std::vector<T> rows = Iota<T>(static_cast<size_t>(lanes * n * stride + 3), T(1));
  std::vector<T> scale = Iota<T>(static_cast<size_t>(n), T(-7));
  std::vector<const T*> src(static_cast<size_t>(lanes));
  // Rows in reverse order and offset by one, so no row starts where the previous one ends.
  for (int64_t l = 0; l < lanes; ++l) {
    src[static_cast<size_t>(l)] = rows.data() + 1 + (lanes - 1 - l) * n * stride;
  }
  std::vector<T> dst(static_cast<size_t>(n * lanes), T(-1));
  LoadLanes(src.data(), stride, scaled ? scale.data() : nullptr, n, lanes, dst.data());
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t l = 0; l < lanes; ++l) {
      const T want =
          src[static_cast<size_t>(l)][j * stride] * (scaled ? scale[static_cast<size_t>(j)] : T(1));
      ASSERT_EQ(dst[static_cast<size_t>(j * lanes + l)], want)
          << "lanes=" << lanes << " n=" << n << " stride=" << stride << " j=" << j << " l=" << l;
    }
  }
}

template <typename T>
void CheckStore(int64_t lanes, int64_t bins, int64_t stride) {
  const std::vector<T> re = Iota<T>(static_cast<size_t>(bins * lanes), T(1));
  const std::vector<T> im = Iota<T>(static_cast<size_t>(bins * lanes), T(5000));
  std::vector<T> out(static_cast<size_t>(lanes * bins * stride + 4), T(0));
  std::vector<T*> dst(static_cast<size_t>(lanes));
  for (int64_t l = 0; l < lanes; ++l) {
    dst[static_cast<size_t>(l)] = out.data() + 2 + (lanes - 1 - l) * bins * stride;
  }
  StoreLanes(re.data(), im.data(), T(2), T(-1), bins, lanes, dst.data(), stride);
  for (int64_t k = 0; k < bins; ++k) {
    for (int64_t l = 0; l < lanes; ++l) {
      const T* d = dst[static_cast<size_t>(l)] + k * stride;
      ASSERT_EQ(d[0], re[static_cast<size_t>(k * lanes + l)] * 2)
          << "lanes=" << lanes << " k=" << k;
      ASSERT_EQ(d[1], -im[static_cast<size_t>(k * lanes + l)]) << "lanes=" << lanes << " k=" << k;
    }
  }
}

TEST(LaneTransposeTest, LoadMatchesDefinition) {
  for (int64_t lanes = 1; lanes <= 16; ++lanes) {
    for (int64_t n : {1, 7, 16, 37, 64}) {
      for (int64_t stride : {1, 3}) {
        CheckLoad<float>(lanes, n, stride, false);
        CheckLoad<float>(lanes, n, stride, true);
        if (lanes <= 8) CheckLoad<double>(lanes, n, stride, true);
      }
    }
  }
}

TEST(LaneTransposeTest, StoreMatchesDefinition) {
  for (int64_t lanes = 1; lanes <= 16; ++lanes) {
    for (int64_t bins : {1, 9, 16, 33, 201}) {
      for (int64_t stride : {2, 6}) {
        CheckStore<float>(lanes, bins, stride);
        if (lanes <= 8) CheckStore<double>(lanes, bins, stride);
      }
    }
  }
}

}  // namespace
}  // namespace epctx::exec::kernels
