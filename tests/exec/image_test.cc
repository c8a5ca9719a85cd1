// The image/ family: Resize and Upsample against the ONNX documentation's examples and brute
// force references, ConvTranspose against a direct scatter, DepthToSpace/SpaceToDepth, LpPool,
// MaxPool's Indices with MaxUnpool, GridSample, RoiAlign and NonMaxSuppression.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

std::vector<double> Doubles(const std::vector<float>& v) {
  return {v.begin(), v.end()};
}

Result<std::vector<Tensor>> Resize(const AttrBuilder& attrs, const Tensor& x, const Tensor* scales,
                                   const Tensor* sizes, const Tensor* roi = nullptr) {
  return RunNode(NodeSpec("Resize", 13), attrs, {&x, roi, scales, sizes});
}

TEST(ResizeTest, DocumentationExamples) {
  Tensor x = FloatTensor({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor down = FloatTensor({4}, {1, 1, 0.6f, 0.6f});
  AttrBuilder linear;
  linear.String("mode", "linear");
  auto r = Resize(linear, x, &down, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 1, 1, 2}, {2.6666665, 4.3333331}, 1e-6, 1e-6, "linear");
  AttrBuilder corners;
  corners.String("mode", "linear").String("coordinate_transformation_mode", "align_corners");
  r = Resize(corners, x, &down, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 1, 1, 2}, {1, 3.142857}, 1e-6, 1e-6, "align_corners");
  AttrBuilder nearest;
  r = Resize(nearest, x, &down, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 1, 1, 2}, {1, 3}, 0, 0, "nearest");

  Tensor small = FloatTensor({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor up = FloatTensor({4}, {1, 1, 2, 3});
  r = Resize(nearest, small, &up, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 1, 4, 6},
              {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}, 0, 0,
              "nearest upsample");
  Tensor sizes = Int64Tensor({4}, {1, 1, 4, 4});
  r = Resize(linear, small, nullptr, &sizes);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 1, 4, 4},
              {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4},
              1e-6, 1e-6, "linear sizes");
}

TEST(ResizeTest, CropAndResizeExtrapolates) {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i + 1);
  Tensor x = FloatTensor({1, 1, 4, 4}, v);
  Tensor roi = FloatTensor({8}, {0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f});
  Tensor sizes = Int64Tensor({4}, {1, 1, 3, 3});
  AttrBuilder attrs;
  attrs.String("mode", "linear")
      .String("coordinate_transformation_mode", "tf_crop_and_resize")
      .Float("extrapolation_value", 10.0f);
  auto r = Resize(attrs, x, nullptr, &sizes, &roi);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 1, 3, 3}, {7.6, 10, 10, 12.4, 10, 10, 10, 10, 10}, 1e-5, 1e-5,
              "tf_crop_and_resize");
}

// Bilinear with half_pixel coordinates, computed directly in 2-D.
std::vector<double> ReferenceBilinear(const std::vector<float>& x, int64_t h, int64_t w, int64_t oh,
                                      int64_t ow) {
  auto coord = [](int64_t o, int64_t in, int64_t out, int64_t* lo, int64_t* hi, double* t) {
    const double c = std::clamp((o + 0.5) * in / out - 0.5, 0.0, static_cast<double>(in - 1));
    *lo = static_cast<int64_t>(std::floor(c));
    *hi = std::min(*lo + 1, in - 1);
    *t = c - *lo;
  };
  std::vector<double> y;
  for (int64_t i = 0; i < oh; ++i) {
    int64_t y0, y1, x0, x1;
    double ty, tx;
    coord(i, h, oh, &y0, &y1, &ty);
    for (int64_t j = 0; j < ow; ++j) {
      coord(j, w, ow, &x0, &x1, &tx);
      y.push_back((1 - ty) * ((1 - tx) * x[y0 * w + x0] + tx * x[y0 * w + x1]) +
                  ty * ((1 - tx) * x[y1 * w + x0] + tx * x[y1 * w + x1]));
    }
  }
  return y;
}

TEST(ResizeTest, LinearMatchesDirectBilinear) {
  std::mt19937 rng(71);
  for (int i = 0; i < 20; ++i) {
    const int64_t h = Pick(rng, 1, 7), w = Pick(rng, 1, 7);
    const int64_t oh = Pick(rng, 1, 12), ow = Pick(rng, 1, 12);
    Tensor x = RandomFloats({1, 1, h, w}, rng);
    Tensor sizes = Int64Tensor({4}, {1, 1, oh, ow});
    AttrBuilder attrs;
    attrs.String("mode", "linear");
    NodeSpec spec("Resize", 13);
    spec.threads = 2;
    auto r = RunNode(spec, attrs, {&x, nullptr, nullptr, &sizes});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ExpectClose((*r)[0], {1, 1, oh, ow}, ReferenceBilinear(FloatsOf(x), h, w, oh, ow), 1e-5, 1e-5,
                fmt::format("{}x{} -> {}x{}", h, w, oh, ow));
  }
}

TEST(ResizeTest, IdentityScalesKeepTheInput) {
  std::mt19937 rng(72);
  Tensor x = RandomFloats({2, 3, 4, 5}, rng);
  Tensor ones = FloatTensor({4}, {1, 1, 1, 1});
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    AttrBuilder attrs;
    attrs.String("mode", mode);
    auto r = Resize(attrs, x, &ones, nullptr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ExpectClose((*r)[0], {2, 3, 4, 5}, Doubles(FloatsOf(x)), 1e-6, 1e-6, mode);
  }
}

TEST(ResizeTest, CubicKeepsConstantsAndNearestModesRound) {
  Tensor x = FloatTensor({1, 4}, {2, 2, 2, 2});
  Tensor scales = FloatTensor({2}, {1, 2.5f});
  for (int exclude : {0, 1}) {
    AttrBuilder attrs;
    attrs.String("mode", "cubic").Int("exclude_outside", exclude).Float("cubic_coeff_a", -0.5f);
    auto r = Resize(attrs, x, &scales, nullptr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ExpectClose((*r)[0], {1, 10}, std::vector<double>(10, 2.0), 1e-5, 1e-5, "constant");
  }
  // 1-D, 2 -> 4 with asymmetric coordinates: 0, 0.5, 1, 1.5.
  Tensor v = FloatTensor({2}, {10, 20});
  Tensor sizes = Int64Tensor({1}, {4});
  const std::pair<const char*, std::vector<double>> modes[] = {
      {"round_prefer_floor", {10, 10, 20, 20}},
      {"round_prefer_ceil", {10, 20, 20, 20}},
      {"floor", {10, 10, 20, 20}},
      {"ceil", {10, 20, 20, 20}},
  };
  for (const auto& [mode, want] : modes) {
    AttrBuilder attrs;
    attrs.String("coordinate_transformation_mode", "asymmetric").String("nearest_mode", mode);
    auto r = Resize(attrs, v, nullptr, &sizes);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ExpectClose((*r)[0], {4}, want, 0, 0, mode);
  }
}

TEST(ResizeTest, NearestOnIntegersAndLegacyOpsets) {
  const std::vector<int64_t> values{1, 2, 3, 4};
  Tensor x = Int64Tensor({1, 1, 2, 2}, values);
  Tensor scales = FloatTensor({4}, {1, 1, 2, 2});
  auto r = Resize(AttrBuilder(), x, &scales, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Int64sOf((*r)[0]),
            (std::vector<int64_t>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  Tensor f = FloatTensor({1, 1, 2, 2}, {1, 2, 3, 4});
  auto r10 = RunNode(NodeSpec("Resize", 10), AttrBuilder(), {&f, &scales});
  ASSERT_TRUE(r10.ok()) << r10.status().ToString();
  AttrBuilder attr_scales;
  attr_scales.Floats("scales", {1, 1, 2, 2});
  auto up7 = RunNode(NodeSpec("Upsample", 7), attr_scales, {&f});
  ASSERT_TRUE(up7.ok()) << up7.status().ToString();
  ExpectClose((*up7)[0], {1, 1, 4, 4}, Doubles(FloatsOf((*r10)[0])), 0, 0, "Upsample-7");
  // Legacy linear: asymmetric coordinates, so the last input column repeats.
  AttrBuilder linear;
  linear.String("mode", "linear");
  Tensor row = FloatTensor({1, 2}, {0, 4});
  Tensor twice = FloatTensor({2}, {1, 2});
  auto up9 = RunNode(NodeSpec("Upsample", 9), linear, {&row, &twice});
  ASSERT_TRUE(up9.ok()) << up9.status().ToString();
  ExpectClose((*up9)[0], {1, 4}, {0, 2, 4, 4}, 0, 0, "Upsample-9 linear");
}

TEST(ResizeTest, Opset18AxesAspectRatioAndSymmetricHalfPixel) {
  Tensor x = FloatTensor({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor sizes = Int64Tensor({2}, {1, 3});
  AttrBuilder not_larger;
  not_larger.Ints("axes", {2, 3}).String("keep_aspect_ratio_policy", "not_larger");
  auto r = RunNode(NodeSpec("Resize", 18), not_larger, {&x, nullptr, nullptr, &sizes});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // One scale, min(1 / 2, 3 / 4) = 0.5, for both axes.
  ExpectClose((*r)[0], {1, 1, 1, 2}, {1, 3}, 0, 0, "not_larger");
  Tensor scales = FloatTensor({1}, {0.6f});
  AttrBuilder symmetric;
  symmetric.Ints("axes", {-1})
      .String("mode", "linear")
      .String("coordinate_transformation_mode", "half_pixel_symmetric");
  Tensor row = FloatTensor({1, 4}, {1, 2, 3, 4});
  r = RunNode(NodeSpec("Resize", 19), symmetric, {&row, nullptr, &scales, nullptr});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 2}, {1.6666666, 3.3333333}, 1e-6, 1e-6, "half_pixel_symmetric");
  AttrBuilder antialias;
  antialias.Int("antialias", 1).String("mode", "linear");
  ExpectError(
      RunNode(NodeSpec("Resize", 18), antialias, {&row, nullptr, &scales, nullptr}).status(),
      StatusCode::kUnsupported, "antialias=1 is not supported");
}

TEST(ResizeTest, Errors) {
  Tensor x = FloatTensor({1, 2}, {1, 2});
  Tensor scales = FloatTensor({2}, {1, 2});
  Tensor sizes = Int64Tensor({2}, {1, 4});
  ExpectError(Resize(AttrBuilder(), x, &scales, &sizes).status(), StatusCode::kInvalidArgument,
              "only one of scales and sizes may be given");
  ExpectError(Resize(AttrBuilder(), x, nullptr, nullptr).status(), StatusCode::kInvalidArgument,
              "neither scales nor sizes is given");
  Tensor three = FloatTensor({3}, {1, 1, 1});
  ExpectError(Resize(AttrBuilder(), x, &three, nullptr).status(), StatusCode::kInvalidArgument,
              "scales has 3 values, expected 2 (the rank of X)");
  AttrBuilder cubic;
  cubic.String("mode", "cubic");
  ExpectError(RunNode(NodeSpec("Resize", 10), cubic, {&x, &scales}).status(),
              StatusCode::kUnsupported, "mode 'cubic' is not supported before opset 11");
  AttrBuilder area;
  area.String("mode", "area");
  ExpectError(Resize(area, x, &scales, nullptr).status(), StatusCode::kUnsupported,
              "mode 'area' is not supported");
  Tensor ints = Int64Tensor({1, 2}, {1, 2});
  AttrBuilder linear;
  linear.String("mode", "linear");
  ExpectError(Resize(linear, ints, &scales, nullptr).status(), StatusCode::kUnsupported,
              "input X has type int64, expected float32");
}

struct ConvTransposeCase {
  std::vector<int64_t> in, kernel, strides, dilations, pads, output_padding, output_shape;
  std::string auto_pad = "NOTSET";
  int64_t channels = 1, out_per_group = 1, group = 1;
};

// Scatters every input element through every tap; `out` and the pads are derived as the spec
// says (ConvTranspose's geometry is computed independently of the kernel here).
std::vector<double> ReferenceConvTranspose(const ConvTransposeCase& c, const std::vector<float>& x,
                                           const std::vector<float>& w, const std::vector<float>& b,
                                           std::vector<int64_t>& out) {
  const size_t r = c.in.size();
  std::vector<int64_t> pb(r, 0);
  out.assign(r, 0);
  for (size_t i = 0; i < r; ++i) {
    const int64_t s = c.strides.empty() ? 1 : c.strides[i];
    const int64_t d = c.dilations.empty() ? 1 : c.dilations[i];
    const int64_t op = c.output_padding.empty() ? 0 : c.output_padding[i];
    const int64_t natural = s * (c.in[i] - 1) + op + (c.kernel[i] - 1) * d + 1;
    if (!c.output_shape.empty()) {
      // The spec's rule: the odd unit at the beginning unless SAME_UPPER; an output larger than
      // the natural one (a negative total) keeps its start, as ONNX Runtime's.
      out[i] = c.output_shape[i];
      const int64_t padding = std::max<int64_t>(0, natural - out[i]);
      pb[i] = c.auto_pad == "SAME_UPPER" ? padding / 2 : padding - padding / 2;
    } else if (c.auto_pad != "NOTSET") {
      out[i] = c.in[i] * s;
      const int64_t total = natural - out[i];
      pb[i] = c.auto_pad == "SAME_LOWER" ? total - total / 2 : total / 2;
    } else {
      pb[i] = c.pads.empty() ? 0 : c.pads[i];
      out[i] = natural - pb[i] - (c.pads.empty() ? 0 : c.pads[r + i]);
    }
  }
  const int64_t m_total = c.out_per_group * c.group, cg = c.channels / c.group;
  const int64_t in_size = Count(c.in), out_size = Count(out), k_size = Count(c.kernel);
  std::vector<double> y(static_cast<size_t>(m_total * out_size));
  for (int64_t m = 0; m < m_total; ++m) {
    for (int64_t o = 0; o < out_size; ++o) y[m * out_size + o] = b.empty() ? 0 : b[m];
  }
  for (int64_t ch = 0; ch < c.channels; ++ch) {
    const int64_t g = ch / cg;
    for (int64_t p = 0; p < in_size; ++p) {
      for (int64_t t = 0; t < k_size; ++t) {
        int64_t flat = 0, rest_p = p, rest_t = t, stride = 1;
        bool inside = true;
        for (size_t i = r; i-- > 0;) {
          const int64_t ip = rest_p % c.in[i], kt = rest_t % c.kernel[i];
          rest_p /= c.in[i];
          rest_t /= c.kernel[i];
          const int64_t pos = ip * (c.strides.empty() ? 1 : c.strides[i]) - pb[i] +
                              kt * (c.dilations.empty() ? 1 : c.dilations[i]);
          inside = inside && pos >= 0 && pos < out[i];
          flat += pos * stride;
          stride *= out[i];
        }
        if (!inside) continue;
        for (int64_t mo = 0; mo < c.out_per_group; ++mo) {
          const int64_t m = g * c.out_per_group + mo;
          y[m * out_size + flat] +=
              double{x[ch * in_size + p]} * w[(ch * c.out_per_group + mo) * k_size + t];
        }
      }
    }
  }
  return y;
}

TEST(ConvTransposeTest, RandomGeometries) {
  std::mt19937 rng(73);
  for (int i = 0; i < 120; ++i) {
    ConvTransposeCase c;
    const size_t rank = static_cast<size_t>(Pick(rng, 1, 3));
    c.group = Pick(rng, 1, 2);
    c.channels = c.group * Pick(rng, 1, 2);
    c.out_per_group = Pick(rng, 1, 3);
    for (size_t d = 0; d < rank; ++d) {
      c.in.push_back(Pick(rng, 1, rank == 3 ? 3 : 5));
      c.kernel.push_back(Pick(rng, 1, 3));
      c.strides.push_back(Pick(rng, 1, 3));
      c.dilations.push_back(Pick(rng, 1, 2));
    }
    const int64_t mode = Pick(rng, 0, 3);
    if (mode == 0) {
      for (size_t d = 0; d < 2 * rank; ++d) c.pads.push_back(Pick(rng, 0, 1));
      for (size_t d = 0; d < rank; ++d) {
        c.output_padding.push_back(Pick(rng, 0, std::max(c.strides[d], c.dilations[d]) - 1));
        const int64_t natural = c.strides[d] * (c.in[d] - 1) + c.output_padding[d] +
                                (c.kernel[d] - 1) * c.dilations[d] + 1;
        // Pads may not eat the whole output.
        if (natural - c.pads[d] - c.pads[rank + d] < 1) c.pads[d] = c.pads[rank + d] = 0;
      }
    } else if (mode == 1) {
      for (size_t d = 0; d < rank; ++d) {
        const int64_t natural =
            c.strides[d] * (c.in[d] - 1) + (c.kernel[d] - 1) * c.dilations[d] + 1;
        c.output_shape.push_back(std::max<int64_t>(1, natural - Pick(rng, 0, 2)));
      }
    } else {
      c.auto_pad = mode == 2 ? "SAME_UPPER" : "SAME_LOWER";
    }
    std::vector<int64_t> x_shape{1, c.channels}, w_shape{c.channels, c.out_per_group};
    x_shape.insert(x_shape.end(), c.in.begin(), c.in.end());
    w_shape.insert(w_shape.end(), c.kernel.begin(), c.kernel.end());
    Tensor x = RandomFloats(x_shape, rng);
    Tensor w = RandomFloats(w_shape, rng);
    Tensor b = RandomFloats({c.out_per_group * c.group}, rng);
    const bool with_bias = Pick(rng, 0, 1);
    AttrBuilder attrs;
    attrs.Int("group", c.group).Ints("strides", c.strides).Ints("dilations", c.dilations);
    attrs.String("auto_pad", c.auto_pad);
    if (!c.pads.empty()) attrs.Ints("pads", c.pads);
    if (!c.output_padding.empty()) attrs.Ints("output_padding", c.output_padding);
    if (!c.output_shape.empty()) attrs.Ints("output_shape", c.output_shape);
    NodeSpec spec("ConvTranspose", 11);
    spec.threads = static_cast<int>(Pick(rng, 1, 2));
    auto r = RunNode(spec, attrs, {&x, &w, with_bias ? &b : nullptr});
    const std::string what = fmt::format("case {}: in {} k {} mode {}", i, fmt::join(c.in, "x"),
                                         fmt::join(c.kernel, "x"), mode);
    ASSERT_TRUE(r.ok()) << what << ": " << r.status().ToString();
    std::vector<int64_t> out;
    const auto ref = ReferenceConvTranspose(c, FloatsOf(x), FloatsOf(w),
                                            with_bias ? FloatsOf(b) : std::vector<float>{}, out);
    std::vector<int64_t> y_shape{1, c.out_per_group * c.group};
    y_shape.insert(y_shape.end(), out.begin(), out.end());
    ExpectClose((*r)[0], y_shape, ref, 1e-5, 1e-4, what);
  }
}

TEST(ConvTransposeTest, Errors) {
  std::mt19937 rng(74);
  Tensor x = RandomFloats({1, 2, 3, 3}, rng);
  Tensor w = RandomFloats({3, 1, 2, 2}, rng);
  ExpectError(RunNode(NodeSpec("ConvTranspose", 11), AttrBuilder(), {&x, &w, nullptr}).status(),
              StatusCode::kInvalidArgument, "input X has 2 channels, W has 3 input channels");
  Tensor w2 = RandomFloats({2, 1, 2, 2}, rng);
  AttrBuilder op;
  op.Ints("output_padding", {2, 0});
  ExpectError(RunNode(NodeSpec("ConvTranspose", 11), op, {&x, &w2, nullptr}).status(),
              StatusCode::kInvalidArgument, "output_padding 0 is 2");
}

TEST(DepthSpaceTest, ExamplesAndRoundTrip) {
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = static_cast<float>(i);
  Tensor x = FloatTensor({1, 8, 1, 3}, v);
  AttrBuilder dcr;
  dcr.Int("blocksize", 2);
  auto r = RunNode(NodeSpec("DepthToSpace", 13), dcr, {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // DCR: channel (bh * 2 + bw) * 2 + c lands at (c, 2h + bh, 2w + bw).
  ExpectClose((*r)[0], {1, 2, 2, 6}, {0, 6, 1, 7,  2, 8,  12, 18, 13, 19, 14, 20,
                                      3, 9, 4, 10, 5, 11, 15, 21, 16, 22, 17, 23},
              0, 0, "DCR");
  AttrBuilder crd;
  crd.Int("blocksize", 2).String("mode", "CRD");
  r = RunNode(NodeSpec("DepthToSpace", 13), crd, {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // CRD: channel c * 4 + bh * 2 + bw.
  ExpectClose((*r)[0], {1, 2, 2, 6}, {0,  3,  1,  4,  2,  5,  6,  9,  7,  10, 8,  11,
                                      12, 15, 13, 16, 14, 17, 18, 21, 19, 22, 20, 23},
              0, 0, "CRD");
  auto back = RunNode(NodeSpec("SpaceToDepth", 13), dcr,
                      {&(*RunNode(NodeSpec("DepthToSpace", 13), dcr, {&x}))[0]});
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectClose((*back)[0], {1, 8, 1, 3}, Doubles(v), 0, 0, "round trip");
  ExpectError(RunNode(NodeSpec("SpaceToDepth", 13), dcr, {&x}).status(),
              StatusCode::kInvalidArgument, "not multiples of blocksize 2");
}

TEST(LpPoolTest, NormsOverWindows) {
  std::mt19937 rng(75);
  Tensor x = RandomFloats({1, 2, 4, 5}, rng);
  const auto xv = FloatsOf(x);
  for (int64_t p : {1, 2, 3}) {
    AttrBuilder attrs;
    attrs.Int("p", p)
        .Ints("kernel_shape", {2, 3})
        .Ints("strides", {2, 1})
        .Ints("pads", {0, 1, 1, 0});
    auto r = RunNode(NodeSpec("LpPool", 18), attrs, {&x});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    // Output 2 x 4 per plane: windows at rows 0 and 2 of the 5 padded ones, columns from -1.
    std::vector<double> ref;
    for (int64_t c = 0; c < 2; ++c) {
      for (int64_t oh = 0; oh < 2; ++oh) {
        for (int64_t ow = 0; ow < 4; ++ow) {
          double sum = 0;
          for (int64_t kh = 0; kh < 2; ++kh) {
            for (int64_t kw = 0; kw < 3; ++kw) {
              const int64_t ih = oh * 2 + kh, iw = ow - 1 + kw;
              if (ih < 4 && iw >= 0 && iw < 5)
                sum += std::pow(std::fabs(xv[(c * 4 + ih) * 5 + iw]), p);
            }
          }
          ref.push_back(std::pow(sum, 1.0 / p));
        }
      }
    }
    ExpectClose((*r)[0], {1, 2, 2, 4}, ref, 1e-5, 1e-4, fmt::format("p={}", p));
  }
  auto g = RunNode(NodeSpec("GlobalLpPool", 2), AttrBuilder(), {&x});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::vector<double> ref(2, 0);
  for (size_t i = 0; i < xv.size(); ++i) ref[i / 20] += double{xv[i]} * xv[i];
  for (double& v : ref) v = std::sqrt(v);
  ExpectClose((*g)[0], {1, 2, 1, 1}, ref, 1e-6, 1e-5, "GlobalLpPool");
}

TEST(MaxPoolIndicesTest, RowAndColumnMajorThenUnpool) {
  Tensor x = FloatTensor({1, 2, 3, 3}, {1, 9, 2, 3, 4, 5, 6, 7, 8,  //
                                        -1, -2, -3, -4, -5, -6, -7, -8, -9});
  for (int64_t order : {0, 1}) {
    AttrBuilder attrs;
    attrs.Ints("kernel_shape", {2, 2}).Ints("strides", {1, 1}).Int("storage_order", order);
    NodeSpec spec("MaxPool", 12);
    spec.outputs = 2;
    auto r = RunNode(spec, attrs, {&x});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ExpectClose((*r)[0], {1, 2, 2, 2}, {9, 9, 7, 8, -1, -2, -4, -5}, 0, 0, "values");
    // (row, col) of each maximum in its 3x3 plane, then the plane offset 9 for channel 1.
    const std::vector<std::pair<int64_t, int64_t>> at{{0, 1}, {0, 1}, {2, 1}, {2, 2},
                                                      {0, 0}, {0, 1}, {1, 0}, {1, 1}};
    std::vector<int64_t> want;
    for (size_t i = 0; i < at.size(); ++i) {
      const auto [h, w] = at[i];
      want.push_back((i < 4 ? 0 : 9) + (order == 0 ? h * 3 + w : h + w * 3));
    }
    EXPECT_EQ(Int64sOf((*r)[1]), want) << "storage_order " << order;
  }
  // MaxUnpool of a non-overlapping pool puts the maxima back in place.
  Tensor y = FloatTensor({1, 1, 4, 4}, {1, 2, 3, 4, 8, 7, 6, 5, 0, 0, 0, 0, 0, 9, 0, 0});
  AttrBuilder pool;
  pool.Ints("kernel_shape", {2, 2}).Ints("strides", {2, 2});
  NodeSpec spec("MaxPool", 12);
  spec.outputs = 2;
  auto pooled = RunNode(spec, pool, {&y});
  ASSERT_TRUE(pooled.ok()) << pooled.status().ToString();
  auto unpooled = RunNode(NodeSpec("MaxUnpool", 11), pool, {&(*pooled)[0], &(*pooled)[1]});
  ASSERT_TRUE(unpooled.ok()) << unpooled.status().ToString();
  ExpectClose((*unpooled)[0], {1, 1, 4, 4}, {0, 0, 0, 0, 8, 0, 6, 0, 0, 0, 0, 0, 0, 9, 0, 0}, 0, 0,
              "MaxUnpool");
  Tensor bigger = Int64Tensor({4}, {1, 1, 5, 5});
  auto padded = RunNode(NodeSpec("MaxUnpool", 11), pool, {&(*pooled)[0], &(*pooled)[1], &bigger});
  ASSERT_TRUE(padded.ok()) << padded.status().ToString();
  std::vector<double> want(25, 0);
  want[5] = 8;
  want[7] = 6;
  want[16] = 9;
  ExpectClose((*padded)[0], {1, 1, 5, 5}, want, 0, 0, "MaxUnpool with output_shape");
  Tensor bad = Int64Tensor({1, 1, 2, 2}, {0, 3, 99, 1});
  ExpectError(RunNode(NodeSpec("MaxUnpool", 11), pool, {&(*pooled)[0], &bad}).status(),
              StatusCode::kInvalidArgument, "index 99 is outside the unpooled shape [1,1,4,4]");
}

TEST(GridSampleTest, ModesAndPadding) {
  Tensor x = FloatTensor({1, 1, 2, 2}, {1, 2, 3, 4});
  // Corners with align_corners, the centre, and a point left of the image.
  Tensor grid = FloatTensor({1, 1, 4, 2}, {-1, -1, 1, 1, 0, 0, -2, -1});
  AttrBuilder aligned;
  aligned.Int("align_corners", 1);
  auto r = RunNode(NodeSpec("GridSample", 16), aligned, {&x, &grid});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // (-2, -1) is x = -0.5 with zeros padding: half of pixel (0, 0).
  ExpectClose((*r)[0], {1, 1, 1, 4}, {1, 4, 2.5, 0.5}, 1e-6, 1e-6, "bilinear");
  AttrBuilder border;
  border.Int("align_corners", 1).String("padding_mode", "border");
  r = RunNode(NodeSpec("GridSample", 16), border, {&x, &grid});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 1, 1, 4}, {1, 4, 2.5, 1}, 1e-6, 1e-6, "border");
  AttrBuilder reflect;
  reflect.Int("align_corners", 1).String("padding_mode", "reflection");
  r = RunNode(NodeSpec("GridSample", 16), reflect, {&x, &grid});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // x = -0.5 reflects to 0.5: between pixels (0, 0) and (0, 1).
  ExpectClose((*r)[0], {1, 1, 1, 4}, {1, 4, 2.5, 1.5}, 1e-6, 1e-6, "reflection");
  AttrBuilder nearest;
  nearest.String("mode", "nearest");
  Tensor g2 = FloatTensor({1, 1, 2, 2}, {-0.6f, -0.6f, 0.6f, -0.6f});
  r = RunNode(NodeSpec("GridSample", 16), nearest, {&x, &g2});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 1, 1, 2}, {1, 2}, 0, 0, "nearest");
  AttrBuilder cubic;
  cubic.String("mode", "bicubic").Int("align_corners", 1).String("padding_mode", "border");
  Tensor flat = FloatTensor({1, 1, 2, 2}, {5, 5, 5, 5});
  r = RunNode(NodeSpec("GridSample", 16), cubic, {&flat, &grid});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {1, 1, 1, 4}, {5, 5, 5, 5}, 1e-5, 1e-5, "bicubic constant");
  AttrBuilder bad;
  bad.String("padding_mode", "wrap");
  ExpectError(RunNode(NodeSpec("GridSample", 16), bad, {&x, &grid}).status(),
              StatusCode::kUnsupported, "padding_mode 'wrap' is not supported");
}

TEST(RoiAlignTest, AverageOfBilinearSamples) {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i);
  Tensor x = FloatTensor({1, 1, 4, 4}, v);
  // The whole image in half_pixel coordinates, one bin, 2x2 samples at 0.5 and 2.5 (minus
  // the half pixel: 0.5 -> 0 ... ): samples at (0.5, 0.5), (0.5, 2.5), (2.5, 0.5), (2.5, 2.5)
  // of the shifted roi [-0.5, 3.5]: x = -0.5 + 1 + {0, 2} = {0.5, 2.5}.
  Tensor rois = FloatTensor({1, 4}, {0, 0, 4, 4});
  Tensor batch = Int64Tensor({1}, {0});
  AttrBuilder attrs;
  attrs.Int("sampling_ratio", 2);
  auto r = RunNode(NodeSpec("RoiAlign", 16), attrs, {&x, &rois, &batch});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // value(y, x) = 4y + x is linear, so the mean of the samples is value(1.5, 1.5) = 7.5.
  ExpectClose((*r)[0], {1, 1, 1, 1}, {7.5}, 1e-5, 1e-5, "avg");
  Tensor bad = Int64Tensor({1}, {3});
  ExpectError(RunNode(NodeSpec("RoiAlign", 16), attrs, {&x, &rois, &bad}).status(),
              StatusCode::kInvalidArgument, "batch index 3 is outside [0, 1)");
}

Result<std::vector<Tensor>> Nms(const AttrBuilder& attrs, const Tensor& boxes, const Tensor& scores,
                                const Tensor* max_out, const Tensor* iou,
                                const Tensor* score_threshold = nullptr) {
  return RunNode(NodeSpec("NonMaxSuppression", 11), attrs,
                 {&boxes, &scores, max_out, iou, score_threshold});
}

void ExpectSelected(const Result<std::vector<Tensor>>& r, const std::vector<int64_t>& want,
                    const std::string& what) {
  ASSERT_TRUE(r.ok()) << what << ": " << r.status().ToString();
  const Tensor& y = (*r)[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{static_cast<int64_t>(want.size() / 3), 3})) << what;
  EXPECT_EQ(Int64sOf(y), want) << what;
}

TEST(NonMaxSuppressionTest, CenterPointBoxesGreedyByScore) {
  // As corners: b0 [0,0]-[1,1]; b1 [0,0.1]-[1,1.1] (IoU with b0 0.9 / 1.1 = 0.82); b2 far
  // away; b3 [-0.5,-0.5]-[1.5,1.5] holds b0 and b1 (IoU 1 / 4 = 0.25 with each).
  Tensor boxes = FloatTensor(
      {1, 4, 4}, {0.5f, 0.5f, 1, 1, 0.5f, 0.6f, 1, 1, 0.5f, 10.5f, 1, 1, 0.5f, 0.5f, 2, 2});
  // Class 0 ranks b3 > b0 > b1 > b2; class 1 ranks b1 > b2 > b0 > b3.
  Tensor scores = FloatTensor({1, 2, 4}, {0.9f, 0.8f, 0.7f, 0.95f, 0.3f, 0.9f, 0.8f, 0.1f});
  Tensor max_out = Int64Tensor({1}, {10});
  Tensor iou = FloatTensor({1}, {0.5f});
  AttrBuilder center;
  center.Int("center_point_box", 1);
  // Class 0: b3, b0 (0.25 <= 0.5), b1 suppressed by b0, b2. Class 1: b1, b2, b0 suppressed by
  // b1, b3.
  ExpectSelected(Nms(center, boxes, scores, &max_out, &iou),
                 {0, 0, 3, 0, 0, 0, 0, 0, 2, 0, 1, 1, 0, 1, 2, 0, 1, 3}, "iou 0.5");
  Tensor two = Int64Tensor({}, {2});
  ExpectSelected(Nms(center, boxes, scores, &two, &iou), {0, 0, 3, 0, 0, 0, 0, 1, 1, 0, 1, 2},
                 "two per class");
  // An IoU threshold of 0.2 lets b3 suppress b0 and b1 as well.
  Tensor strict = FloatTensor({}, {0.2f});
  ExpectSelected(Nms(center, boxes, scores, &max_out, &strict),
                 {0, 0, 3, 0, 0, 2, 0, 1, 1, 0, 1, 2}, "iou 0.2");
  // Scores must exceed the threshold 0.8: b3 and b0 of class 0 and b1 of class 1 remain.
  Tensor score_threshold = FloatTensor({1}, {0.8f});
  ExpectSelected(Nms(center, boxes, scores, &max_out, &iou, &score_threshold),
                 {0, 0, 3, 0, 0, 0, 0, 1, 1}, "score threshold");
  // The same boxes as corners [y1, x1, y2, x2] with flipped corners give the same answer.
  Tensor corners = FloatTensor(
      {1, 4, 4}, {1, 1, 0, 0, 1.1f, 1, 0.1f, 0, 10, 0, 11, 1, 1.5f, 1.5f, -0.5f, -0.5f});
  ExpectSelected(Nms(AttrBuilder(), corners, scores, &max_out, &iou),
                 {0, 0, 3, 0, 0, 0, 0, 0, 2, 0, 1, 1, 0, 1, 2, 0, 1, 3}, "corners");
}

TEST(NonMaxSuppressionTest, TiesAndDefaults) {
  // Three identical boxes with equal scores: the lowest index wins, the others are suppressed.
  Tensor boxes = FloatTensor({1, 3, 4}, {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1});
  Tensor scores = FloatTensor({1, 1, 3}, {0.5f, 0.5f, 0.5f});
  Tensor max_out = Int64Tensor({1}, {3});
  Tensor iou = FloatTensor({1}, {0.5f});
  ExpectSelected(Nms(AttrBuilder(), boxes, scores, &max_out, &iou), {0, 0, 0}, "identical");
  // Without an IoU threshold (0) any overlap suppresses; disjoint boxes never do.
  Tensor apart = FloatTensor({1, 3, 4}, {0, 0, 1, 1, 0, 2, 1, 3, 0, 4, 1, 5});
  ExpectSelected(Nms(AttrBuilder(), apart, scores, &max_out, nullptr), {0, 0, 0, 0, 0, 1, 0, 0, 2},
                 "disjoint ties");
  // Opset 10 computes the same.
  ExpectSelected(
      RunNode(NodeSpec("NonMaxSuppression", 10), AttrBuilder(), {&apart, &scores, &max_out}),
      {0, 0, 0, 0, 0, 1, 0, 0, 2}, "opset 10");
  // max_output_boxes_per_class defaults to 0: nothing is selected.
  ExpectSelected(Nms(AttrBuilder(), boxes, scores, nullptr, &iou), {}, "no max");
}

TEST(NonMaxSuppressionTest, RejectsBadInputs) {
  Tensor boxes = FloatTensor({1, 2, 3}, {0, 0, 1, 0, 0, 1});
  Tensor scores = FloatTensor({1, 1, 2}, {0.5f, 0.4f});
  Tensor max_out = Int64Tensor({1}, {3});
  ExpectError(Nms(AttrBuilder(), boxes, scores, &max_out, nullptr).status(),
              StatusCode::kInvalidArgument,
              "input boxes has shape [1,2,3], expected [num_batches, num_boxes, 4]");
  Tensor good = FloatTensor({1, 2, 4}, {0, 0, 1, 1, 0, 0, 1, 1});
  Tensor wrong_scores = FloatTensor({1, 1, 3}, {0.5f, 0.4f, 0.3f});
  ExpectError(Nms(AttrBuilder(), good, wrong_scores, &max_out, nullptr).status(),
              StatusCode::kInvalidArgument, "input scores has shape [1,1,3]");
  Tensor iou = FloatTensor({1}, {1.5f});
  ExpectError(Nms(AttrBuilder(), good, scores, &max_out, &iou).status(),
              StatusCode::kInvalidArgument, "iou_threshold is 1.5, expected a value in [0, 1]");
  AttrBuilder center;
  center.Int("center_point_box", 2);
  ExpectError(Nms(center, good, scores, &max_out, nullptr).status(), StatusCode::kInvalidArgument,
              "center_point_box is 2, expected 0 or 1");
}

}  // namespace
}  // namespace epctx::exec::testing
