// The quant/ family: QuantizeLinear and DequantizeLinear per tensor and per axis,
// DynamicQuantizeLinear, and the integer products (MatMulInteger, QLinearMatMul, ConvInteger,
// QLinearConv) against direct integer references.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "exec/kernels/quant/int_matmul.h"
#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

template <typename T>
std::vector<T> RandomInts(size_t n, std::mt19937& rng, int lo, int hi) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(d(rng));
  return v;
}

TEST(QuantizeLinearTest, RoundsHalfToEvenAndSaturates) {
  Tensor x = FloatTensor({6}, {0, 2, 3, 1000, -254, -1000});
  Tensor scale = FloatTensor({}, {2});
  const uint8_t zp = 128;
  Tensor zero_point = MakeTensor(DataType::kUint8, {}, &zp);
  auto r = RunNode(NodeSpec("QuantizeLinear", 13), AttrBuilder(), {&x, &scale, &zero_point});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ((*r)[0].dtype(), DataType::kUint8);
  // 3 / 2 = 1.5 rounds to 2; -254 / 2 + 128 = 1.
  EXPECT_EQ(ValuesOf<uint8_t>((*r)[0]), (std::vector<uint8_t>{128, 129, 130, 255, 1, 0}));
  const int8_t szp = -1;
  Tensor signed_zp = MakeTensor(DataType::kInt8, {}, &szp);
  r = RunNode(NodeSpec("QuantizeLinear", 13), AttrBuilder(), {&x, &scale, &signed_zp});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ValuesOf<int8_t>((*r)[0]), (std::vector<int8_t>{-1, 0, 1, 127, -128, -128}));
  // Without a zero point the output is uint8 with zero point 0.
  r = RunNode(NodeSpec("QuantizeLinear", 10), AttrBuilder(), {&x, &scale});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ValuesOf<uint8_t>((*r)[0]), (std::vector<uint8_t>{0, 1, 2, 255, 0, 0}));
}

TEST(QuantizeLinearTest, PerAxisRoundTrip) {
  std::mt19937 rng(91);
  Tensor x = RandomFloats({2, 3, 4}, rng, -4, 4);
  Tensor scale = FloatTensor({3}, {0.05f, 0.1f, 0.2f});
  const std::vector<uint8_t> zps{100, 128, 150};
  Tensor zero_point = Typed(DataType::kUint8, {3}, zps);
  AttrBuilder attrs;
  attrs.Int("axis", 1);
  auto q = RunNode(NodeSpec("QuantizeLinear", 13), attrs, {&x, &scale, &zero_point});
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  auto d = RunNode(NodeSpec("DequantizeLinear", 13), attrs, {&(*q)[0], &scale, &zero_point});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  const auto xv = FloatsOf(x);
  const auto qv = ValuesOf<uint8_t>((*q)[0]);
  std::vector<double> back;
  for (size_t i = 0; i < xv.size(); ++i) {
    const size_t c = i / 4 % 3;
    const float s = FloatsOf(scale)[c];
    const double want = std::clamp(std::nearbyint(xv[i] / s) + zps[c], 0.0f, 255.0f);
    EXPECT_EQ(qv[i], want) << "element " << i;
    back.push_back((want - zps[c]) * s);
  }
  ExpectClose((*d)[0], {2, 3, 4}, back, 1e-6, 1e-6, "DequantizeLinear per axis");
  ExpectError(RunNode(NodeSpec("QuantizeLinear", 10), attrs, {&x, &scale, &zero_point}).status(),
              StatusCode::kInvalidArgument, "scale has shape [3], expected a scalar");
  Tensor four = FloatTensor({4}, {1, 1, 1, 1});
  ExpectError(RunNode(NodeSpec("DequantizeLinear", 13), attrs, {&(*q)[0], &four}).status(),
              StatusCode::kInvalidArgument, "scale has 4 values, input dim 1 is 3");
}

TEST(DequantizeLinearTest, Int32AndInt8) {
  const std::vector<int32_t> v{-5, 0, 7};
  Tensor x = Typed(DataType::kInt32, {3}, v);
  Tensor scale = FloatTensor({}, {0.5f});
  auto r = RunNode(NodeSpec("DequantizeLinear", 13), AttrBuilder(), {&x, &scale});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {3}, {-2.5, 0, 3.5}, 0, 0, "int32");
  const std::vector<int8_t> v8{-128, 3, 127};
  const int8_t zp = 3;
  Tensor x8 = Typed(DataType::kInt8, {3}, v8);
  Tensor zp8 = MakeTensor(DataType::kInt8, {}, &zp);
  r = RunNode(NodeSpec("DequantizeLinear", 13), AttrBuilder(), {&x8, &scale, &zp8});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {3}, {-65.5, 0, 62}, 0, 0, "int8");
  ExpectError(RunNode(NodeSpec("DequantizeLinear", 13), AttrBuilder(), {&x, &scale, &zp8}).status(),
              StatusCode::kInvalidArgument, "input x_zero_point has type int8, x has int32");
}

TEST(DynamicQuantizeLinearTest, ScaleAndZeroPointFromRange) {
  Tensor x = FloatTensor({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f});
  NodeSpec spec("DynamicQuantizeLinear", 11);
  spec.outputs = 3;
  auto r = RunNode(spec, AttrBuilder(), {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // scale = (2 - -3) / 255, zero point = round(3 / scale) = 153.
  ExpectClose((*r)[1], {}, {5.0 / 255}, 1e-7, 1e-6, "y_scale");
  EXPECT_EQ(ValuesOf<uint8_t>((*r)[2]), std::vector<uint8_t>{153});
  EXPECT_EQ(ValuesOf<uint8_t>((*r)[0]), (std::vector<uint8_t>{153, 255, 0, 26, 221, 179}));
  Tensor zeros = FloatTensor({2}, {0, 0});
  r = RunNode(spec, AttrBuilder(), {&zeros});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ValuesOf<uint8_t>((*r)[0]), (std::vector<uint8_t>{0, 0}));
}

TEST(MatMulIntegerTest, BatchedWithZeroPoints) {
  std::mt19937 rng(92);
  const int64_t m = 3, k = 5, n = 4;
  const auto a = RandomInts<uint8_t>(2 * m * k, rng, 0, 255);
  const auto b = RandomInts<int8_t>(k * n, rng, -128, 127);
  Tensor ta = Typed(DataType::kUint8, {2, m, k}, a);
  Tensor tb = Typed(DataType::kInt8, {k, n}, b);
  const std::vector<uint8_t> azp{7, 9, 11};  // per row of A
  const int8_t bzp = -3;
  Tensor tazp = Typed(DataType::kUint8, {m}, azp);
  Tensor tbzp = MakeTensor(DataType::kInt8, {}, &bzp);
  auto r = RunNode(NodeSpec("MatMulInteger", 10), AttrBuilder(), {&ta, &tb, &tazp, &tbzp});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ((*r)[0].shape(), (std::vector<int64_t>{2, m, n}));
  const auto y = ValuesOf<int32_t>((*r)[0]);
  for (int64_t bi = 0; bi < 2; ++bi) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int32_t acc = 0;
        for (int64_t t = 0; t < k; ++t) {
          acc += (a[(bi * m + i) * k + t] - azp[i]) * (b[t * n + j] - bzp);
        }
        EXPECT_EQ(y[(bi * m + i) * n + j], acc) << bi << "," << i << "," << j;
      }
    }
  }
  ExpectError(RunNode(NodeSpec("MatMulInteger", 10), AttrBuilder(), {&ta, &ta}).status(),
              StatusCode::kInvalidArgument, "have different inner dims");
}

// The integer GEMM under the 8-bit kernels: tiles of 4 rows and 16 columns with every remainder
// (rows 1 to 3 left, columns short of 16, an odd k), random operands and operands at the ends of
// [-255, 255] (the largest sums: 255 x 255 x k), 1 and 2 threads, against an int64 reference.
TEST(Int8GemmTest, ExactForEveryTileRemainderAndAtTheEndsOfTheRange) {
  std::mt19937 rng(95);
  for (int64_t m : {1, 3, 4, 6, 9}) {
    for (int64_t n : {1, 15, 16, 17, 40}) {
      for (int64_t k : {1, 2, 7, 64, 301}) {
        for (bool ends : {false, true}) {
          SCOPED_TRACE(::testing::Message() << m << "x" << n << "x" << k << (ends ? " ends" : ""));
          auto a = RandomInts<int32_t>(static_cast<size_t>(m * k), rng, -255, 255);
          auto b = RandomInts<int32_t>(static_cast<size_t>(k * n), rng, -255, 255);
          if (ends) {
            for (int32_t& v : a) v = v < 0 ? -255 : 255;
            for (int32_t& v : b) v = v < 0 ? -255 : 255;
          }
          std::vector<int32_t> want(static_cast<size_t>(m * n));
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              int64_t acc = 0;
              for (int64_t t = 0; t < k; ++t) acc += int64_t{a[i * k + t]} * b[t * n + j];
              want[static_cast<size_t>(i * n + j)] = static_cast<int32_t>(acc);
            }
          }
          for (int threads : {1, 2}) {
            std::vector<int32_t> c(static_cast<size_t>(m * n), -1);
            kernels::Int8Gemm(m, n, k, a.data(), b.data(), c.data(), threads);
            ASSERT_EQ(c, want) << threads << " threads";
          }
        }
      }
    }
  }
}

// uint8 255 times int8 127 and -128 along a long k: the sums that kernels adding pairs of
// products in int16 saturate on, exact here at 1 and 2 threads.
TEST(MatMulIntegerTest, ExactAtTheEndsOfTheRanges) {
  std::mt19937 rng(96);
  const int64_t m = 37, k = 300, n = 40;
  const std::vector<uint8_t> a(static_cast<size_t>(m * k), 255);
  auto b = RandomInts<int8_t>(static_cast<size_t>(k * n), rng, -128, 127);
  for (int8_t& v : b) v = v < 0 ? int8_t{-128} : int8_t{127};
  Tensor ta = Typed(DataType::kUint8, {m, k}, a);
  Tensor tb = Typed(DataType::kInt8, {k, n}, b);
  for (int threads : {1, 2}) {
    NodeSpec spec("MatMulInteger", 10);
    spec.threads = threads;
    auto r = RunNode(spec, AttrBuilder(), {&ta, &tb});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const auto y = ValuesOf<int32_t>((*r)[0]);
    for (int64_t j = 0; j < n; ++j) {
      int32_t acc = 0;
      for (int64_t t = 0; t < k; ++t) acc += 255 * b[static_cast<size_t>(t * n + j)];
      for (int64_t i = 0; i < m; ++i) {
        ASSERT_EQ(y[static_cast<size_t>(i * n + j)], acc) << i << "," << j << " " << threads;
      }
    }
  }
}

TEST(QLinearMatMulTest, RequantizesTheProduct) {
  const std::vector<uint8_t> a{208, 236, 0, 238, 3, 214, 255, 29};
  const std::vector<uint8_t> b{152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247};
  Tensor ta = Typed(DataType::kUint8, {2, 4}, a);
  Tensor tb = Typed(DataType::kUint8, {4, 3}, b);
  Tensor as = FloatTensor({}, {0.0066f}), bs = FloatTensor({}, {0.00705f}),
         ys = FloatTensor({}, {0.0107f});
  const uint8_t azp = 113, bzp = 114, yzp = 118;
  Tensor tazp = MakeTensor(DataType::kUint8, {}, &azp),
         tbzp = MakeTensor(DataType::kUint8, {}, &bzp),
         tyzp = MakeTensor(DataType::kUint8, {}, &yzp);
  auto r = RunNode(NodeSpec("QLinearMatMul", 10), AttrBuilder(),
                   {&ta, &as, &tazp, &tb, &bs, &tbzp, &ys, &tyzp});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // The ONNX documentation's example.
  EXPECT_EQ(ValuesOf<uint8_t>((*r)[0]), (std::vector<uint8_t>{168, 115, 255, 1, 66, 151}));
}

TEST(ConvIntegerTest, MatchesDirectConvolution) {
  std::mt19937 rng(93);
  const int64_t c = 4, m = 4, h = 5, w = 6, group = 2;
  const auto x = RandomInts<uint8_t>(c * h * w, rng, 0, 255);
  const auto wt = RandomInts<uint8_t>(m * (c / group) * 9, rng, 0, 255);
  const uint8_t xzp = 120;
  const std::vector<uint8_t> wzp{3, 100, 128, 255};
  Tensor tx = Typed(DataType::kUint8, {1, c, h, w}, x);
  Tensor tw = Typed(DataType::kUint8, {m, c / group, 3, 3}, wt);
  Tensor txzp = MakeTensor(DataType::kUint8, {}, &xzp);
  Tensor twzp = Typed(DataType::kUint8, {m}, wzp);
  AttrBuilder attrs;
  attrs.Ints("pads", {1, 0, 1, 2}).Ints("strides", {2, 1}).Int("group", group);
  auto r = RunNode(NodeSpec("ConvInteger", 10), attrs, {&tx, &tw, &txzp, &twzp});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const int64_t oh = (h + 2 - 3) / 2 + 1, ow = (w + 2 - 3) + 1;
  ASSERT_EQ((*r)[0].shape(), (std::vector<int64_t>{1, m, oh, ow}));
  const auto y = ValuesOf<int32_t>((*r)[0]);
  for (int64_t o = 0; o < m; ++o) {
    const int64_t g = o / (m / group);
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        int32_t acc = 0;
        for (int64_t ci = 0; ci < c / group; ++ci) {
          for (int64_t kh = 0; kh < 3; ++kh) {
            for (int64_t kw = 0; kw < 3; ++kw) {
              const int64_t ih = i * 2 - 1 + kh, iw = j - 0 + kw;
              if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
              const int32_t xv = x[((g * (c / group) + ci) * h + ih) * w + iw] - xzp;
              const int32_t wv = wt[((o * (c / group) + ci) * 3 + kh) * 3 + kw] - wzp[o];
              acc += xv * wv;
            }
          }
        }
        EXPECT_EQ(y[(o * oh + i) * ow + j], acc) << o << "," << i << "," << j;
      }
    }
  }
}

TEST(QLinearConvTest, PerChannelScalesAndBias) {
  // 1x1 convolution: y[m] = round((sum_c (x[c] - xzp) (w[m, c] - wzp[m]) + B[m]) * xs * ws[m]
  // / ys) + yzp.
  const std::vector<uint8_t> x{10, 20, 30, 40};  // [1, 2, 1, 2]
  const std::vector<int8_t> w{1, -2, 3, 4};      // [2, 2, 1, 1]
  const std::vector<float> ws{0.5f, 0.25f};
  const std::vector<int32_t> bias{100, -40};
  Tensor tx = Typed(DataType::kUint8, {1, 2, 1, 2}, x);
  Tensor tw = Typed(DataType::kInt8, {2, 2, 1, 1}, w);
  Tensor xs = FloatTensor({}, {0.1f}), tws = FloatTensor({2}, ws), ys = FloatTensor({}, {0.2f});
  const uint8_t xzp = 10, yzp = 5;
  const int8_t wzp = 0;
  Tensor txzp = MakeTensor(DataType::kUint8, {}, &xzp),
         tyzp = MakeTensor(DataType::kUint8, {}, &yzp);
  Tensor twzp = MakeTensor(DataType::kInt8, {}, &wzp);
  Tensor tb = Typed(DataType::kInt32, {2}, bias);
  auto r = RunNode(NodeSpec("QLinearConv", 10), AttrBuilder(),
                   {&tx, &xs, &txzp, &tw, &tws, &twzp, &ys, &tyzp, &tb});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<uint8_t> want;
  for (int m = 0; m < 2; ++m) {
    for (int p = 0; p < 2; ++p) {
      int32_t acc = bias[m];
      for (int c = 0; c < 2; ++c) acc += (x[c * 2 + p] - xzp) * w[m * 2 + c];
      const float v = std::nearbyint(acc * (0.1f * ws[m] / 0.2f)) + yzp;
      want.push_back(static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f)));
    }
  }
  EXPECT_EQ(ValuesOf<uint8_t>((*r)[0]), want);
}

}  // namespace
}  // namespace epctx::exec::testing
