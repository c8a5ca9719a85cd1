// The norm/ family against double-precision references: LogSoftmax and Hardmax in both axis
// semantics, LayerNormalization (with its statistics outputs and a broadcast Scale),
// InstanceNormalization, LRN and MeanVarianceNormalization.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

// Along `len` elements `inner` apart, for each of `outer` blocks.
template <typename Fn>
void ForEachLine(int64_t outer, int64_t len, int64_t inner, Fn&& fn) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) fn(o * len * inner + i, inner);
  }
}

std::vector<double> ReferenceLogSoftmax(const std::vector<float>& x, int64_t outer, int64_t len,
                                        int64_t inner) {
  std::vector<double> y(x.size());
  ForEachLine(outer, len, inner, [&](int64_t base, int64_t step) {
    double max = -1e300, sum = 0;
    for (int64_t a = 0; a < len; ++a) max = std::max(max, double{x[base + a * step]});
    for (int64_t a = 0; a < len; ++a) sum += std::exp(x[base + a * step] - max);
    for (int64_t a = 0; a < len; ++a) y[base + a * step] = x[base + a * step] - max - std::log(sum);
  });
  return y;
}

TEST(LogSoftmaxTest, SingleAxisAndCoercedTo2D) {
  std::mt19937 rng(61);
  const std::vector<int64_t> shape{2, 3, 4, 5};
  Tensor x = RandomFloats(shape, rng, -5, 5);
  const auto xv = FloatsOf(x);
  for (int64_t axis : {0, 1, 2, 3, -1, -3}) {
    const int64_t a = axis < 0 ? axis + 4 : axis;
    AttrBuilder attrs;
    attrs.Int("axis", axis);
    // Opset 13: the single dim `axis`.
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) outer *= shape[d];
    for (int64_t d = a + 1; d < 4; ++d) inner *= shape[d];
    auto r13 = RunNode(NodeSpec("LogSoftmax", 13), attrs, {&x});
    ASSERT_TRUE(r13.ok()) << r13.status().ToString();
    ExpectClose((*r13)[0], shape, ReferenceLogSoftmax(xv, outer, shape[a], inner), 1e-5, 1e-5,
                "LogSoftmax-13");
    // Opset 11: rows of prod(dims[axis:]).
    auto r11 = RunNode(NodeSpec("LogSoftmax", 11), attrs, {&x});
    ASSERT_TRUE(r11.ok()) << r11.status().ToString();
    ExpectClose((*r11)[0], shape, ReferenceLogSoftmax(xv, outer, Count(shape) / outer, 1), 1e-5,
                1e-5, "LogSoftmax-11");
  }
}

TEST(LogSoftmaxTest, LargeValuesStayFinite) {
  Tensor x = FloatTensor({1, 3}, {1000.0f, 1001.0f, 1002.0f});
  auto r = RunNode(NodeSpec("LogSoftmax", 13), AttrBuilder(), {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 3}, {-2.40760596, -1.40760596, -0.40760596}, 1e-5, 1e-5, "large");
}

TEST(HardmaxTest, FirstMaximumWins) {
  Tensor x = FloatTensor({2, 3}, {1, 3, 3, 2, 0, 2});
  auto r = RunNode(NodeSpec("Hardmax", 13), AttrBuilder(), {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {2, 3}, {0, 1, 0, 1, 0, 0}, 0, 0, "rows");
  AttrBuilder axis0;
  axis0.Int("axis", 0);
  auto c = RunNode(NodeSpec("Hardmax", 13), axis0, {&x});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ExpectClose((*c)[0], {2, 3}, {0, 1, 1, 1, 0, 0}, 0, 0, "columns");
  // Opset 11, axis 0: the whole tensor is one row.
  auto all = RunNode(NodeSpec("Hardmax", 11), axis0, {&x});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ExpectClose((*all)[0], {2, 3}, {0, 1, 0, 0, 0, 0}, 0, 0, "flattened");
}

TEST(HardmaxTest, Errors) {
  Tensor x = Int64Tensor({2}, {1, 2});
  ExpectError(RunNode(NodeSpec("Hardmax", 13), AttrBuilder(), {&x}).status(),
              StatusCode::kUnsupported,
              "input 0 has type int64, which Hardmax does not run on (it takes float32, float64)");
  Tensor f = FloatTensor({2}, {1, 2});
  AttrBuilder axis;
  axis.Int("axis", 1);
  ExpectError(RunNode(NodeSpec("Hardmax", 13), axis, {&f}).status(), StatusCode::kInvalidArgument,
              "axis 1 is out of range for rank 1");
}

// com.epctx MaskedSoftmax (the compiler's fusion is tested in tests/compile/): each step in
// the unfused order, against a reference in double; and what it refuses.
TEST(MaskedSoftmaxTest, ScaleMaskAndSelectionPerRow) {
  const Tensor x = FloatTensor({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor scale = FloatTensor({}, {2});
  const Tensor mask = FloatTensor({3}, {0, -1, 0});
  uint8_t keep[] = {1, 1, 0, 1, 1, 1};  // row 0 drops its last column
  const Tensor condition = MakeTensor(DataType::kBool, {2, 3}, keep);
  AttrBuilder a;
  a.Int("scale_divides", 1).Float("fill", -INFINITY).Int("fill_when", 0);
  auto y = RunNode(NodeSpec("MaskedSoftmax", 1, "com.epctx"), a, {&x, &scale, &mask, &condition});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  std::vector<double> ref;
  const double rows[2][3] = {{0.5, 1 - 1, -INFINITY}, {2, 2.5 - 1, 3}};
  for (const auto& row : rows) {
    const double m = std::max({row[0], row[1], row[2]});
    double sum = 0;
    for (double v : row) sum += std::exp(v - m);
    for (double v : row) ref.push_back(std::exp(v - m) / sum);
  }
  ExpectClose((*y)[0], {2, 3}, ref, 1e-7, 1e-6, "MaskedSoftmax");
}

TEST(MaskedSoftmaxTest, ScaleMustHoldOneElement) {
  const Tensor x = FloatTensor({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor scale = FloatTensor({2}, {2, 2});
  AttrBuilder a;
  ExpectError(RunNode(NodeSpec("MaskedSoftmax", 1, "com.epctx"), a, {&x, &scale}).status(),
              StatusCode::kInvalidArgument, "scale must hold one element, not shape [2]");
}

TEST(LayerNormTest, RowsWithStatisticsOutputs) {
  std::mt19937 rng(62);
  const std::vector<int64_t> shape{2, 3, 4};
  Tensor x = RandomFloats(shape, rng, -3, 3);
  const auto xv = FloatsOf(x);
  for (int64_t axis : {0, 1, -1}) {
    const int64_t a = axis < 0 ? axis + 3 : axis;
    std::vector<int64_t> norm_shape(shape.begin() + a, shape.end());
    const int64_t len = Count(norm_shape), rows = Count(shape) / len;
    Tensor scale = RandomFloats(norm_shape, rng);
    Tensor bias = RandomFloats(norm_shape, rng);
    const auto sv = FloatsOf(scale), bv = FloatsOf(bias);
    AttrBuilder attrs;
    attrs.Int("axis", axis).Float("epsilon", 1e-3f);
    NodeSpec spec("LayerNormalization", 17);
    spec.outputs = 3;
    auto r = RunNode(spec, attrs, {&x, &scale, &bias});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<double> y, mean, inv_std;
    for (int64_t row = 0; row < rows; ++row) {
      double m = 0, v = 0;
      for (int64_t i = 0; i < len; ++i) m += xv[row * len + i];
      m /= len;
      for (int64_t i = 0; i < len; ++i) v += (xv[row * len + i] - m) * (xv[row * len + i] - m);
      const double inv = 1 / std::sqrt(v / len + 1e-3);
      for (int64_t i = 0; i < len; ++i) y.push_back((xv[row * len + i] - m) * inv * sv[i] + bv[i]);
      mean.push_back(m);
      inv_std.push_back(inv);
    }
    std::vector<int64_t> stat_shape(shape.begin(), shape.begin() + a);
    stat_shape.resize(3, 1);
    ExpectClose((*r)[0], shape, y, 1e-5, 1e-4, "Y");
    ExpectClose((*r)[1], stat_shape, mean, 1e-6, 1e-5, "Mean");
    ExpectClose((*r)[2], stat_shape, inv_std, 1e-6, 1e-5, "InvStdDev");
  }
}

TEST(LayerNormTest, ScaleBroadcastsAndBiasIsOptional) {
  Tensor x = FloatTensor({1, 2, 2}, {1, 3, 2, 6});
  Tensor scale = FloatTensor({1, 2}, {2, 1});  // broadcast over the 2 rows of the [2, 2] block
  AttrBuilder attrs;
  attrs.Int("axis", 1).Float("epsilon", 0.0f);
  auto r = RunNode(NodeSpec("LayerNormalization", 17), attrs, {&x, &scale, nullptr});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // mean 3, variance (4 + 0 + 1 + 9) / 4 = 3.5
  const double s = 1 / std::sqrt(3.5);
  ExpectClose((*r)[0], {1, 2, 2}, {-2 * s * 2, 0, -1 * s * 2, 3 * s}, 1e-6, 1e-5, "Y");
  Tensor bad = FloatTensor({3}, {1, 1, 1});
  ExpectError(RunNode(NodeSpec("LayerNormalization", 17), attrs, {&x, &bad, nullptr}).status(),
              StatusCode::kInvalidArgument, "input Scale has shape [3], which does not broadcast");
}

TEST(InstanceNormTest, PerImageAndChannel) {
  std::mt19937 rng(63);
  const std::vector<int64_t> shape{2, 3, 4, 5};
  Tensor x = RandomFloats(shape, rng, -2, 4);
  Tensor scale = RandomFloats({3}, rng);
  Tensor bias = RandomFloats({3}, rng);
  const auto xv = FloatsOf(x), sv = FloatsOf(scale), bv = FloatsOf(bias);
  AttrBuilder attrs;
  attrs.Float("epsilon", 1e-2f);
  NodeSpec spec("InstanceNormalization", 6);
  spec.threads = 2;
  auto r = RunNode(spec, attrs, {&x, &scale, &bias});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<double> y;
  for (int64_t p = 0; p < 6; ++p) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < 20; ++i) m += xv[p * 20 + i];
    m /= 20;
    for (int64_t i = 0; i < 20; ++i) v += (xv[p * 20 + i] - m) * (xv[p * 20 + i] - m);
    v /= 20;
    for (int64_t i = 0; i < 20; ++i) {
      y.push_back((xv[p * 20 + i] - m) / std::sqrt(v + 1e-2) * sv[p % 3] + bv[p % 3]);
    }
  }
  ExpectClose((*r)[0], shape, y, 1e-5, 1e-4, "InstanceNormalization");
  Tensor wrong = RandomFloats({2}, rng);
  ExpectError(RunNode(spec, attrs, {&x, &wrong, &bias}).status(), StatusCode::kInvalidArgument,
              "input scale has shape [2], expected [3]");
}

TEST(LrnTest, AcrossChannels) {
  std::mt19937 rng(64);
  const std::vector<int64_t> shape{2, 5, 3, 2};
  Tensor x = RandomFloats(shape, rng);
  const auto xv = FloatsOf(x);
  for (int64_t size : {1, 2, 3, 4}) {
    AttrBuilder attrs;
    attrs.Int("size", size).Float("alpha", 0.5f).Float("beta", 0.6f).Float("bias", 1.5f);
    auto r = RunNode(NodeSpec("LRN", 13), attrs, {&x});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<double> y;
    for (int64_t n = 0; n < 2; ++n) {
      for (int64_t c = 0; c < 5; ++c) {
        for (int64_t i = 0; i < 6; ++i) {
          double sum = 0;
          const int64_t lo = std::max<int64_t>(0, c - (size - 1) / 2);
          const int64_t hi = std::min<int64_t>(4, c + size / 2);
          for (int64_t k = lo; k <= hi; ++k)
            sum += double{xv[(n * 5 + k) * 6 + i]} * xv[(n * 5 + k) * 6 + i];
          y.push_back(xv[(n * 5 + c) * 6 + i] / std::pow(1.5 + 0.5 / size * sum, 0.6));
        }
      }
    }
    ExpectClose((*r)[0], shape, y, 1e-6, 1e-5, "LRN");
  }
  ExpectError(RunNode(NodeSpec("LRN", 13), AttrBuilder(), {&x}).status(),
              StatusCode::kInvalidArgument, "required attribute 'size' is missing");
}

TEST(MeanVarianceNormTest, DefaultAndExplicitAxes) {
  std::mt19937 rng(65);
  const std::vector<int64_t> shape{2, 3, 2, 2};
  Tensor x = RandomFloats(shape, rng, -1, 3);
  const auto xv = FloatsOf(x);
  for (const std::vector<int64_t>& axes :
       {std::vector<int64_t>{0, 2, 3}, std::vector<int64_t>{1}, std::vector<int64_t>{-1}}) {
    AttrBuilder attrs;
    if (axes.size() != 3) attrs.Ints("axes", axes);
    auto r = RunNode(NodeSpec("MeanVarianceNormalization", 13), attrs, {&x});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<bool> reduced(4, false);
    for (int64_t a : axes) reduced[a < 0 ? a + 4 : a] = true;
    // Group key of an element: its index along the kept dims.
    auto key = [&](int64_t e) {
      int64_t k = 0, rest = e;
      for (int64_t d = 3; d >= 0; --d) {
        const int64_t i = rest % shape[d];
        rest /= shape[d];
        if (!reduced[d]) k = k * 10 + i + 1;
      }
      return k;
    };
    std::vector<double> y(xv.size());
    for (int64_t e = 0; e < Count(shape); ++e) {
      double s = 0, sq = 0, n = 0;
      for (int64_t f = 0; f < Count(shape); ++f) {
        if (key(f) != key(e)) continue;
        s += xv[f];
        sq += double{xv[f]} * xv[f];
        ++n;
      }
      const double m = s / n;
      y[e] = (xv[e] - m) / (std::sqrt(sq / n - m * m) + 1e-9);
    }
    ExpectClose((*r)[0], shape, y, 1e-4, 1e-4, "MeanVarianceNormalization");
  }
}

}  // namespace
}  // namespace epctx::exec::testing
