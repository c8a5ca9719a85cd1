// The int8 kernels on oneDNN: com.epctx DnnlMatMulInteger (u8 x s8 matmul on int8 weights packed
// once, the activation's zero point applied through the column sums) against MatMulInteger
// computed directly in integers, and com.epctx DnnlIntegerConv (int8 convolution, input padded
// with its zero point, float output scaled per channel) against the convolution of the
// dequantized values; and their refusals of inputs that do not fit the packed weight. Weights
// are drawn from the range the compiler gives these kernels on this CPU (all int8 values where
// they have VNNI, [-64, 64] without: onednn::Int8ProductsExact), products checked exactly also
// at that range's bounds, and packing refuses weights the kernels here would saturate on.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "exec/kernels/onednn/conv_primitive.h"
#include "exec/kernels/onednn/isa.h"
#include "exec/kernels/onednn/weight_format.h"
#include "exec/kernels/onednn/weight_packing.h"
#include "kernel_test_helpers.h"
#include "util/cpu_features.h"

namespace epctx::exec::testing {
namespace {

namespace onednn = kernels::onednn;

// The int8 weights the compiler gives oneDNN's int8 kernels on this CPU: from `full_low` (-128,
// or -127 for symmetric quantization) to 127 where they have VNNI, within [-64, 64] without.
int WeightLow(int full_low) {
  return onednn::Int8KernelsHaveVnni() ? full_low : -onednn::kInt8WeightBoundWithoutVnni;
}
int WeightHigh() {
  return onednn::Int8KernelsHaveVnni() ? 127 : onednn::kInt8WeightBoundWithoutVnni;
}

template <typename T>
std::vector<T> RandomValues(size_t n, std::mt19937& rng, int lo, int hi) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(d(rng));
  return v;
}

struct PackedMatMul {
  int64_t k = 0, n = 0;
  std::vector<int8_t> w;  // [K, N]
  onednn::PackedWeight packed;
  Tensor colsum;
  AttrBuilder attrs;
};

// Weights from the range above, or, when `at_bounds`, each one of its two ends.
PackedMatMul Pack(int64_t k, int64_t n, std::mt19937& rng, bool at_bounds = false) {
  PackedMatMul p;
  p.k = k;
  p.n = n;
  p.w = RandomValues<int8_t>(static_cast<size_t>(k * n), rng, WeightLow(-128), WeightHigh());
  if (at_bounds) {
    for (int8_t& v : p.w) v = static_cast<int8_t>(v < 0 ? WeightLow(-128) : WeightHigh());
  }
  onednn::MatMulConfig config;
  config.integer = true;
  auto packed = onednn::PackIntegerMatMulWeights({128, k, n}, config, p.w.data());
  EXPECT_TRUE(packed.ok()) << packed.status().ToString();
  p.packed = std::move(*packed);
  std::vector<int32_t> sums(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < n; ++j) sums[static_cast<size_t>(j)] += p.w[i * n + j];
  }
  p.colsum = MakeTensor(DataType::kInt32, {n}, sums.data());
  p.attrs.Ints("weights_shape", {k, n}).Ints("weights_format", p.packed.format);
  return p;
}

Result<std::vector<Tensor>> RunPacked(const PackedMatMul& p, const Tensor& a, const Tensor* zp,
                                      const Tensor* colsum = nullptr, int threads = 1) {
  NodeSpec spec("DnnlMatMulInteger", 1, "com.epctx");
  spec.threads = threads;
  return RunNode(spec, p.attrs, {&a, &p.packed.bytes, zp, colsum ? colsum : &p.colsum});
}

TEST(DnnlMatMulInteger, MatchesTheIntegerProduct) {
  std::mt19937 rng(7);
  const PackedMatMul p = Pack(70, 33, rng);
  EXPECT_NE(onednn::DescribeWeightFormat(p.packed.format).find("int8"), std::string::npos)
      << onednn::DescribeWeightFormat(p.packed.format);
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{1, 70}, {7, 70}, {2, 5, 70}, {300, 70}, {70}}) {
    for (int zero_point : {-1, 0, 131, 255}) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(::testing::Message()
                     << ShapeToString(shape) << " zp " << zero_point << " threads " << threads);
        const int64_t m = Count(shape) / p.k;
        const auto a = RandomValues<uint8_t>(static_cast<size_t>(m * p.k), rng, 0, 255);
        const Tensor ta = MakeTensor(DataType::kUint8, shape, a.data());
        const uint8_t z = static_cast<uint8_t>(std::max(zero_point, 0));
        const Tensor tz = MakeTensor(DataType::kUint8, {}, &z);
        auto r = RunPacked(p, ta, zero_point < 0 ? nullptr : &tz, nullptr, threads);
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        std::vector<int64_t> want_shape(shape.begin(), shape.end() - 1);
        want_shape.push_back(p.n);
        ASSERT_EQ((*r)[0].shape(), want_shape);
        const int32_t* y = (*r)[0].data_as<int32_t>();
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < p.n; ++j) {
            int32_t acc = 0;
            for (int64_t t = 0; t < p.k; ++t) acc += (a[i * p.k + t] - z) * p.w[t * p.n + j];
            ASSERT_EQ(y[i * p.n + j], acc) << i << "," << j;
          }
        }
      }
    }
  }
}

// Every weight at an end of the range and every activation 255: the largest sums of products the
// kernels meet (2 x 255 x 64 = 32640 per pair of products without VNNI, one short of int16's
// limit), exact.
TEST(DnnlMatMulInteger, ExactAtTheBoundsOfTheWeightRange) {
  std::mt19937 rng(12);
  const PackedMatMul p = Pack(64, 24, rng, true);
  const std::vector<uint8_t> a(3 * 64, 255);
  const Tensor ta = MakeTensor(DataType::kUint8, {3, 64}, a.data());
  for (int threads : {1, 2}) {
    auto r = RunPacked(p, ta, nullptr, nullptr, threads);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const int32_t* y = (*r)[0].data_as<int32_t>();
    for (int64_t j = 0; j < p.n; ++j) {
      int32_t acc = 0;
      for (int64_t t = 0; t < p.k; ++t) acc += 255 * p.w[t * p.n + j];
      for (int64_t i = 0; i < 3; ++i) ASSERT_EQ(y[i * p.n + j], acc) << i << "," << j;
    }
  }
}

// Weights beyond [-64, 64] are packed for oneDNN's int8 kernels only where those have VNNI, and
// then need it from the CPU that runs them (the blob's fingerprint); elsewhere packing refuses
// them rather than let the kernels saturate.
TEST(DnnlMatMulInteger, WeightsBeyond64AreForVnniOnly) {
  onednn::MatMulConfig config;
  config.integer = true;
  std::vector<int8_t> w(32 * 8, 64);
  w[5] = -64;
  auto within = onednn::PackIntegerMatMulWeights({16, 32, 8}, config, w.data());
  ASSERT_TRUE(within.ok()) << within.status().ToString();
  EXPECT_EQ(within->required_cpu_features, 0u);
  w[7] = 65;
  w[9] = -128;
  auto beyond = onednn::PackIntegerMatMulWeights({16, 32, 8}, config, w.data());
  if (onednn::Int8KernelsHaveVnni()) {
    ASSERT_TRUE(beyond.ok()) << beyond.status().ToString();
    EXPECT_EQ(beyond->required_cpu_features, cpu::kAvx512Vnni);
  } else {
    ExpectError(beyond.status(), StatusCode::kUnsupported,
                "int8 weights from -128 to 65 would saturate in oneDNN's int8 kernels at this "
                "CPU's tier (avx2, no VNNI), which add pairs of products in int16: only weights "
                "within [-64, 64] are multiplied exactly");
  }
}

// With output_scales the product comes out as float32, scaled per column (or by one value).
TEST(DnnlMatMulInteger, OutputScalesGiveTheScaledProductInFloat) {
  std::mt19937 rng(10);
  PackedMatMul p = Pack(40, 24, rng);
  for (const bool per_column : {true, false}) {
    std::vector<float> scales(per_column ? 24 : 1);
    for (size_t j = 0; j < scales.size(); ++j) scales[j] = 0.01f * static_cast<float>(j + 1);
    AttrBuilder attrs;
    attrs.Ints("weights_shape", {40, 24})
        .Ints("weights_format", p.packed.format)
        .Floats("output_scales", scales);
    const auto a = RandomValues<uint8_t>(5 * 40, rng, 0, 255);
    const Tensor ta = MakeTensor(DataType::kUint8, {5, 40}, a.data());
    const uint8_t z = 131;
    const Tensor tz = MakeTensor(DataType::kUint8, {}, &z);
    for (int threads : {1, 2}) {
      NodeSpec spec("DnnlMatMulInteger", 1, "com.epctx");
      spec.threads = threads;
      auto r = RunNode(spec, attrs, {&ta, &p.packed.bytes, &tz, &p.colsum});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_EQ((*r)[0].dtype(), DataType::kFloat32);
      std::vector<double> ref(5 * 24);
      for (int64_t i = 0; i < 5; ++i) {
        for (int64_t j = 0; j < 24; ++j) {
          int32_t acc = 0;
          for (int64_t t = 0; t < 40; ++t) acc += (a[i * 40 + t] - z) * p.w[t * 24 + j];
          ref[i * 24 + j] = static_cast<float>(acc) * scales[per_column ? j : 0];
        }
      }
      ExpectClose((*r)[0], std::vector<int64_t>{5, 24}, ref, 0, 0, "scaled integer product");
    }
  }
  AttrBuilder bad;
  bad.Ints("weights_shape", {40, 24})
      .Ints("weights_format", p.packed.format)
      .Floats("output_scales", {1.0f, 2.0f});
  const std::vector<uint8_t> a(40, 1);
  const Tensor ta = MakeTensor(DataType::kUint8, {1, 40}, a.data());
  ExpectError(RunNode(NodeSpec("DnnlMatMulInteger", 1, "com.epctx"), bad,
                      {&ta, &p.packed.bytes, nullptr, &p.colsum})
                  .status(),
              StatusCode::kInvalidArgument, "2 output_scales for 24 columns");
}

TEST(DnnlMatMulInteger, Refusals) {
  std::mt19937 rng(8);
  const PackedMatMul p = Pack(16, 8, rng);
  const std::vector<uint8_t> a(4 * 16, 3);
  const Tensor ta = MakeTensor(DataType::kUint8, {4, 16}, a.data());
  const Tensor wrong_k = MakeTensor(DataType::kUint8, {4, 8}, a.data());
  ExpectError(RunPacked(p, wrong_k, nullptr).status(), StatusCode::kInvalidArgument,
              "input A has shape [4,8], expected [..., 16]");
  const std::vector<uint8_t> two{1, 2};
  const Tensor per_row = MakeTensor(DataType::kUint8, {2}, two.data());
  ExpectError(RunPacked(p, ta, &per_row).status(), StatusCode::kInvalidArgument,
              "input a_zero_point has type uint8 and shape [2], expected one uint8");
  const std::vector<int32_t> short_sums(4, 0);
  const Tensor sums = MakeTensor(DataType::kInt32, {4}, short_sums.data());
  ExpectError(RunPacked(p, ta, nullptr, &sums).status(), StatusCode::kInvalidArgument,
              "input W_colsum has shape [4], expected int32 [8]");
  PackedMatMul truncated = Pack(16, 8, rng);
  truncated.packed.bytes =
      MakeTensor(DataType::kInt8, {truncated.packed.bytes.element_count() - 64},
                 truncated.packed.bytes.data());
  ExpectError(RunPacked(truncated, ta, nullptr).status(), StatusCode::kInvalidArgument,
              "packed W holds");
}

}  // namespace
}  // namespace epctx::exec::testing

namespace epctx::exec::testing {
namespace {

// An int8 layout where a float matmul's weights belong (a forged or mixed-up blob) is refused
// before oneDNN sees it.
TEST(DnnlMatMulInteger, AnInt8LayoutIsNoFloatLayout) {
  std::mt19937 rng(9);
  const PackedMatMul p = Pack(16, 8, rng);
  AttrBuilder attrs;
  attrs.Ints("weights_shape", {16, 8}).Ints("weights_format", p.packed.format);
  const Tensor a = RandomFloats({4, 16}, rng);
  const Tensor w = RandomFloats({p.packed.bytes.element_count() / 4}, rng);
  ExpectError(RunNode(NodeSpec("DnnlMatMul", 1, "com.epctx"), attrs, {&a, &w}).status(),
              StatusCode::kInvalidArgument, "is not a float32 layout");
}

}  // namespace
}  // namespace epctx::exec::testing

namespace epctx::exec::testing {
namespace {

struct IntegerConvCase {
  int64_t n, c, h, w, m, k, stride, pad, dilation, group;
  uint8_t zero_point;
  bool per_channel;
};

// Packs a random int8 filter for `t`, runs DnnlIntegerConv, and compares with
// y = scale[m] * sum over valid taps of (x - z) * w + b[m] computed in double. `at_bounds`: every
// input 255 and every weight an end of the range.
void CheckIntegerConv(const IntegerConvCase& t, int threads, std::mt19937& rng,
                      bool at_bounds = false) {
  SCOPED_TRACE(::testing::Message() << "c" << t.c << " m" << t.m << " k" << t.k << " s" << t.stride
                                    << " p" << t.pad << " d" << t.dilation << " g" << t.group
                                    << " z" << int(t.zero_point) << " threads " << threads);
  const int64_t cg = t.c / t.group, mg = t.m / t.group;
  auto x = RandomValues<uint8_t>(static_cast<size_t>(t.n * t.c * t.h * t.w), rng, 0, 255);
  auto w = RandomValues<int8_t>(static_cast<size_t>(t.m * cg * t.k * t.k), rng, WeightLow(-127),
                                WeightHigh());
  if (at_bounds) {
    std::fill(x.begin(), x.end(), uint8_t{255});
    for (int8_t& v : w) v = static_cast<int8_t>(v < 0 ? WeightLow(-127) : WeightHigh());
  }
  std::vector<float> scale(t.per_channel ? static_cast<size_t>(t.m) : 1);
  for (size_t i = 0; i < scale.size(); ++i) scale[i] = 0.001f * static_cast<float>(i + 1);
  std::vector<float> b(static_cast<size_t>(t.m)), b_folded(static_cast<size_t>(t.m));
  for (int64_t o = 0; o < t.m; ++o) {
    b[static_cast<size_t>(o)] = 0.1f * static_cast<float>(o % 7) - 0.3f;
    int64_t sum = 0;
    for (int64_t i = 0; i < cg * t.k * t.k; ++i)
      sum += w[static_cast<size_t>(o * cg * t.k * t.k + i)];
    const float s = scale[t.per_channel ? static_cast<size_t>(o) : 0];
    b_folded[static_cast<size_t>(o)] = b[static_cast<size_t>(o)] / s - t.zero_point * float(sum);
  }
  kernels::WindowAttrs window;
  window.strides = {t.stride, t.stride};
  window.pads = {t.pad, t.pad, t.pad, t.pad};
  window.dilations = {t.dilation, t.dilation};
  const std::vector<int64_t> weight_dims{t.m, cg, t.k, t.k}, src_dims{t.n, t.c, t.h, t.w};
  auto g = onednn::ResolveConvGeometry(window, t.group, weight_dims, src_dims);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  onednn::ConvGeometry padded = *g;
  for (size_t i = 0; i < 2; ++i) {
    padded.in_spatial[i] += 2 * t.pad;
    padded.pad_begin[i] = padded.pad_end[i] = 0;
  }
  onednn::ConvConfig config;
  config.integer = true;
  config.has_bias = true;
  config.output_scales = scale;
  auto packed = onednn::PackIntegerConvWeights(padded, config, w.data());
  ASSERT_TRUE(packed.ok()) << packed.status().ToString();
  AttrBuilder attrs;
  attrs.Ints("weights_shape", {t.m, cg, t.k, t.k})
      .Ints("weights_format", packed->format)
      .Ints("strides", {t.stride, t.stride})
      .Ints("pads", {t.pad, t.pad, t.pad, t.pad})
      .Ints("dilations", {t.dilation, t.dilation})
      .Int("group", t.group)
      .Int("x_zero_point", t.zero_point)
      .Floats("output_scales", scale);
  const Tensor tx = MakeTensor(DataType::kUint8, {t.n, t.c, t.h, t.w}, x.data());
  const Tensor tb = FloatTensor({t.m}, b_folded);
  NodeSpec spec("DnnlIntegerConv", 1, "com.epctx");
  spec.threads = threads;
  auto r = RunNode(spec, attrs, {&tx, &packed->bytes, &tb});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const int64_t oh = g->out_spatial[0], ow = g->out_spatial[1];
  std::vector<double> ref(static_cast<size_t>(t.n * t.m * oh * ow));
  for (int64_t n = 0; n < t.n; ++n) {
    for (int64_t o = 0; o < t.m; ++o) {
      const int64_t grp = o / mg;
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t xo = 0; xo < ow; ++xo) {
          int64_t acc = 0;
          for (int64_t ci = 0; ci < cg; ++ci) {
            for (int64_t ky = 0; ky < t.k; ++ky) {
              for (int64_t kx = 0; kx < t.k; ++kx) {
                const int64_t iy = y * t.stride - t.pad + ky * t.dilation;
                const int64_t ix = xo * t.stride - t.pad + kx * t.dilation;
                if (iy < 0 || iy >= t.h || ix < 0 || ix >= t.w) continue;
                const int64_t c = grp * cg + ci;
                acc += (int64_t{x[static_cast<size_t>(((n * t.c + c) * t.h + iy) * t.w + ix)]} -
                        t.zero_point) *
                       w[static_cast<size_t>(((o * cg + ci) * t.k + ky) * t.k + kx)];
              }
            }
          }
          const double s = scale[t.per_channel ? static_cast<size_t>(o) : 0];
          ref[static_cast<size_t>(((n * t.m + o) * oh + y) * ow + xo)] =
              s * static_cast<double>(acc) + b[static_cast<size_t>(o)];
        }
      }
    }
  }
  ExpectClose((*r)[0], std::vector<int64_t>{t.n, t.m, oh, ow}, ref, 1e-4, 1e-5, "integer conv");
}

TEST(DnnlIntegerConv, MatchesTheConvolutionOfTheDequantizedValues) {
  std::mt19937 rng(11);
  const IntegerConvCase cases[] = {
      {1, 3, 17, 13, 16, 3, 1, 1, 1, 1, 128, true},  // a stem, padded with the zero point
      {2, 16, 9, 9, 32, 3, 2, 1, 1, 1, 3, false},    // stride 2, per-tensor scale
      {1, 32, 8, 8, 32, 3, 1, 2, 2, 32, 77, true},   // depthwise, dilated
      {1, 24, 7, 5, 48, 1, 1, 0, 1, 1, 0, true},     // 1x1, zero point 0
      {1, 16, 6, 6, 8, 3, 1, 1, 1, 2, 200, true},    // two groups
  };
  for (const IntegerConvCase& t : cases) {
    for (int threads : {1, 2}) CheckIntegerConv(t, threads, rng);
  }
}

TEST(DnnlIntegerConv, ExactAtTheBoundsOfTheWeightRange) {
  std::mt19937 rng(13);
  const IntegerConvCase cases[] = {
      {1, 32, 6, 6, 16, 3, 1, 1, 1, 1, 0, true},     // 288 products per output
      {1, 16, 5, 5, 16, 1, 1, 0, 1, 1, 255, false},  // 1x1, zero point 255
  };
  for (const IntegerConvCase& t : cases) {
    for (int threads : {1, 2}) CheckIntegerConv(t, threads, rng, true);
  }
}

// As for the matmul: filters beyond [-64, 64] only where the kernels have VNNI.
TEST(DnnlIntegerConv, WeightsBeyond64AreForVnniOnly) {
  kernels::WindowAttrs window;
  const std::vector<int64_t> weight_dims{8, 16, 3, 3}, src_dims{1, 16, 6, 6};
  auto g = onednn::ResolveConvGeometry(window, 1, weight_dims, src_dims);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  onednn::ConvConfig config;
  config.integer = true;
  config.has_bias = true;
  config.output_scales = {0.5f};
  std::vector<int8_t> w(8 * 16 * 9, -64);
  auto within = onednn::PackIntegerConvWeights(*g, config, w.data());
  ASSERT_TRUE(within.ok()) << within.status().ToString();
  EXPECT_EQ(within->required_cpu_features, 0u);
  w.back() = 127;
  auto beyond = onednn::PackIntegerConvWeights(*g, config, w.data());
  if (onednn::Int8KernelsHaveVnni()) {
    ASSERT_TRUE(beyond.ok()) << beyond.status().ToString();
    EXPECT_EQ(beyond->required_cpu_features, cpu::kAvx512Vnni);
  } else {
    ExpectError(beyond.status(), StatusCode::kUnsupported,
                "int8 weights from -64 to 127 would saturate in oneDNN's int8 kernels");
  }
}

TEST(DnnlIntegerConv, Refusals) {
  AttrBuilder no_format;
  no_format.Ints("weights_shape", {4, 2, 3, 3}).Floats("output_scales", {0.1f});
  const std::vector<uint8_t> x(2 * 5 * 5, 1);
  const Tensor tx = MakeTensor(DataType::kUint8, {1, 2, 5, 5}, x.data());
  const std::vector<int8_t> w(64, 1);
  const Tensor tw = MakeTensor(DataType::kInt8, {64}, w.data());
  const Tensor tb = FloatTensor({4}, {0, 0, 0, 0});
  ExpectError(
      RunNode(NodeSpec("DnnlIntegerConv", 1, "com.epctx"), no_format, {&tx, &tw, &tb}).status(),
      StatusCode::kInvalidArgument, "weights_format");
  AttrBuilder bad_scales;
  bad_scales.Ints("weights_shape", {4, 2, 3, 3})
      .Ints("weights_format", {1})
      .Floats("output_scales", {0.1f, 0.2f});
  ExpectError(
      RunNode(NodeSpec("DnnlIntegerConv", 1, "com.epctx"), bad_scales, {&tx, &tw, &tb}).status(),
      StatusCode::kInvalidArgument, "2 output_scales for 4 output channels");
  AttrBuilder bad_zero;
  bad_zero.Ints("weights_shape", {4, 2, 3, 3})
      .Ints("weights_format", {1})
      .Floats("output_scales", {0.1f})
      .Int("x_zero_point", 300);
  ExpectError(
      RunNode(NodeSpec("DnnlIntegerConv", 1, "com.epctx"), bad_zero, {&tx, &tw, &tb}).status(),
      StatusCode::kInvalidArgument, "x_zero_point 300 is not a uint8");
  // Pads that would make the padded copy of X enormous are refused before it is allocated.
  const std::vector<int8_t> packed(4 * 2 * 3 * 3, 1);
  const Tensor tp = MakeTensor(DataType::kInt8, {72}, packed.data());
  onednn::ConvConfig config;
  config.integer = true;
  config.has_bias = true;
  config.output_scales = {0.1f};
  kernels::WindowAttrs window;
  const std::vector<int64_t> weight_dims{4, 2, 3, 3}, src_dims{1, 2, 5, 5};
  auto g = onednn::ResolveConvGeometry(window, 1, weight_dims, src_dims);
  ASSERT_TRUE(g.ok());
  auto real = onednn::PackIntegerConvWeights(*g, config, packed.data());
  ASSERT_TRUE(real.ok()) << real.status().ToString();
  AttrBuilder huge_pads;
  huge_pads.Ints("weights_shape", {4, 2, 3, 3})
      .Ints("weights_format", real->format)
      .Floats("output_scales", {0.1f})
      .Ints("pads", {1 << 20, 1 << 20, 1 << 20, 1 << 20});
  ExpectError(
      RunNode(NodeSpec("DnnlIntegerConv", 1, "com.epctx"), huge_pads, {&tx, &real->bytes, &tb})
          .status(),
      StatusCode::kInvalidArgument, "would hold");
  // Pads that leave the copy small but its rows millions of columns wide (a fuzzer's blob asked
  // oneDNN for 2 GB this way): refused before oneDNN sees them.
  AttrBuilder wide_pads;
  wide_pads.Ints("weights_shape", {4, 2, 3, 3})
      .Ints("weights_format", real->format)
      .Floats("output_scales", {0.1f})
      .Ints("pads", {0, 0, 0, 1 << 22});
  auto wide =
      RunNode(NodeSpec("DnnlIntegerConv", 1, "com.epctx"), wide_pads, {&tx, &real->bytes, &tb});
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(wide.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(wide.status().message(),
            "a convolution of 1x2x5x4194309 by 4x2x3x3 writes rows 4194307 wide; oneDNN's "
            "convolutions are made here for at most 2097152 (creating one takes memory per "
            "column)");
}

}  // namespace
}  // namespace epctx::exec::testing
