// Conv / FusedConv against a direct double-precision reference, on random shapes and every
// attribute combination the kernel distinguishes (padding, strides, dilations, groups,
// depthwise, auto_pad, 1x1, the tiled and the split-rows GEMM paths, 1 and 2 threads).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

struct ConvCase {
  int64_t n = 1, c = 1, m = 1, group = 1;
  std::vector<int64_t> in, kernel, strides, dilations, pads;  // pads: [begin..., end...]
  std::string auto_pad = "NOTSET";
  bool bias = true;
  std::string activation;  // FusedConv when non-empty
  std::vector<float> activation_params;
  int threads = 1;
};

std::string Describe(const ConvCase& k) {
  auto join = [](const std::vector<int64_t>& v) {
    std::string s;
    for (int64_t x : v) s += std::to_string(x) + ",";
    return "[" + s + "]";
  };
  return "N" + std::to_string(k.n) + " C" + std::to_string(k.c) + " M" + std::to_string(k.m) +
         " g" + std::to_string(k.group) + " in" + join(k.in) + " k" + join(k.kernel) + " s" +
         join(k.strides) + " d" + join(k.dilations) + " p" + join(k.pads) + " " + k.auto_pad + " " +
         k.activation + " t" + std::to_string(k.threads);
}

double Activate(const ConvCase& k, double v) {
  if (k.activation == "Relu") return std::max(v, 0.0);
  if (k.activation == "Sigmoid") return 1.0 / (1.0 + std::exp(-v));
  if (k.activation == "Clip") {
    return std::min(std::max(v, double{k.activation_params[0]}), double{k.activation_params[1]});
  }
  return v;
}

// The spec's padding and output size, computed independently of the kernel's code.
void ResolvePads(const ConvCase& k, std::vector<int64_t>& pb, std::vector<int64_t>& pe,
                 std::vector<int64_t>& out) {
  const size_t r = k.in.size();
  pb.assign(r, 0);
  pe.assign(r, 0);
  out.assign(r, 0);
  for (size_t i = 0; i < r; ++i) {
    const int64_t s = k.strides.empty() ? 1 : k.strides[i];
    const int64_t d = k.dilations.empty() ? 1 : k.dilations[i];
    const int64_t span = (k.kernel[i] - 1) * d + 1;
    if (k.auto_pad == "SAME_UPPER" || k.auto_pad == "SAME_LOWER") {
      out[i] = (k.in[i] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out[i] - 1) * s + span - k.in[i]);
      pb[i] = k.auto_pad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
      pe[i] = total - pb[i];
    } else {
      if (k.auto_pad == "NOTSET" && !k.pads.empty()) {
        pb[i] = k.pads[i];
        pe[i] = k.pads[r + i];
      }
      out[i] = (k.in[i] + pb[i] + pe[i] - span) / s + 1;
    }
  }
}

std::vector<double> ReferenceConv(const ConvCase& k, const std::vector<float>& x,
                                  const std::vector<float>& w, const std::vector<float>& b,
                                  std::vector<int64_t>& out_shape) {
  std::vector<int64_t> pb, pe, out;
  ResolvePads(k, pb, pe, out);
  // Pad every spatial list to 3 dims at the front.
  const size_t r = k.in.size();
  auto to3 = [r](const std::vector<int64_t>& v, int64_t fill, int64_t dflt) {
    std::vector<int64_t> o(3, fill);
    for (size_t i = 0; i < r; ++i) o[3 - r + i] = v.empty() ? dflt : v[i];
    return o;
  };
  const auto in = to3(k.in, 1, 1), ker = to3(k.kernel, 1, 1), st = to3(k.strides, 1, 1),
             dl = to3(k.dilations, 1, 1), p0 = to3(pb, 0, 0), o3 = to3(out, 1, 1);
  const int64_t cg = k.c / k.group, mg = k.m / k.group;
  std::vector<double> y;
  for (int64_t n = 0; n < k.n; ++n) {
    for (int64_t m = 0; m < k.m; ++m) {
      const int64_t g = m / mg;
      for (int64_t od = 0; od < o3[0]; ++od) {
        for (int64_t oh = 0; oh < o3[1]; ++oh) {
          for (int64_t ow = 0; ow < o3[2]; ++ow) {
            double acc = k.bias ? b[static_cast<size_t>(m)] : 0.0;
            for (int64_t c = 0; c < cg; ++c) {
              for (int64_t a = 0; a < ker[0]; ++a) {
                for (int64_t bb = 0; bb < ker[1]; ++bb) {
                  for (int64_t e = 0; e < ker[2]; ++e) {
                    const int64_t id = od * st[0] - p0[0] + a * dl[0];
                    const int64_t ih = oh * st[1] - p0[1] + bb * dl[1];
                    const int64_t iw = ow * st[2] - p0[2] + e * dl[2];
                    if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2]) {
                      continue;
                    }
                    const int64_t xi =
                        (((n * k.c + g * cg + c) * in[0] + id) * in[1] + ih) * in[2] + iw;
                    const int64_t wi = (((m * cg + c) * ker[0] + a) * ker[1] + bb) * ker[2] + e;
                    acc += double{x[static_cast<size_t>(xi)]} * w[static_cast<size_t>(wi)];
                  }
                }
              }
            }
            y.push_back(Activate(k, acc));
          }
        }
      }
    }
  }
  out_shape = {k.n, k.m};
  out_shape.insert(out_shape.end(), out.begin(), out.end());
  return y;
}

void CheckConv(const ConvCase& k, std::mt19937& rng) {
  std::vector<int64_t> x_shape{k.n, k.c};
  x_shape.insert(x_shape.end(), k.in.begin(), k.in.end());
  std::vector<int64_t> w_shape{k.m, k.c / k.group};
  w_shape.insert(w_shape.end(), k.kernel.begin(), k.kernel.end());
  Tensor x = RandomFloats(x_shape, rng);
  Tensor w = RandomFloats(w_shape, rng);
  Tensor b = RandomFloats({k.m}, rng);
  AttrBuilder attrs;
  attrs.Int("group", k.group).String("auto_pad", k.auto_pad);
  // Exercise both the given and the inferred kernel_shape.
  if (rng() % 2 == 0) attrs.Ints("kernel_shape", k.kernel);
  if (!k.strides.empty()) attrs.Ints("strides", k.strides);
  if (!k.dilations.empty()) attrs.Ints("dilations", k.dilations);
  if (!k.pads.empty()) attrs.Ints("pads", k.pads);
  NodeSpec spec{"Conv"};
  spec.threads = k.threads;
  if (!k.activation.empty()) {
    spec = NodeSpec{"FusedConv", 1, "com.epctx"};
    spec.threads = k.threads;
    attrs.String("activation", k.activation);
    if (!k.activation_params.empty()) attrs.Floats("activation_params", k.activation_params);
  }
  std::vector<const Tensor*> inputs{&x, &w};
  if (k.bias) inputs.push_back(&b);
  auto result = RunNode(spec, attrs, inputs);
  ASSERT_TRUE(result.ok()) << Describe(k) << ": " << result.status().ToString();
  std::vector<int64_t> shape;
  const auto ref = ReferenceConv(k, FloatsOf(x), FloatsOf(w), FloatsOf(b), shape);
  const double k_size = static_cast<double>(Count(w_shape) / k.m);
  ExpectClose((*result)[0], shape, ref, 1e-5 * k_size + 1e-5, 1e-4, Describe(k));
}

ConvCase RandomCase(std::mt19937& rng, size_t rank) {
  ConvCase k;
  k.n = Pick(rng, 1, 2);
  k.group = std::vector<int64_t>{1, 1, 2, 3}[static_cast<size_t>(Pick(rng, 0, 3))];
  k.c = k.group * Pick(rng, 1, 4);
  k.m = k.group * Pick(rng, 1, 4);
  if (Pick(rng, 0, 4) == 0) {  // depthwise, sometimes with a channel multiplier
    k.group = k.c;
    k.m = k.c * Pick(rng, 1, 2);
  }
  const int64_t max_in = rank == 3 ? 6 : rank == 2 ? 11 : 20;
  for (size_t i = 0; i < rank; ++i) {
    k.kernel.push_back(Pick(rng, 1, 3));
    k.in.push_back(Pick(rng, 4, max_in));
  }
  if (Pick(rng, 0, 1)) {
    for (size_t i = 0; i < rank; ++i) k.strides.push_back(Pick(rng, 1, 3));
  }
  if (Pick(rng, 0, 2) == 0) {
    for (size_t i = 0; i < rank; ++i) k.dilations.push_back(Pick(rng, 1, 2));
  }
  const int64_t pad_mode = Pick(rng, 0, 5);
  if (pad_mode <= 2) {
    for (size_t i = 0; i < 2 * rank; ++i) k.pads.push_back(Pick(rng, 0, 2));
  } else {
    k.auto_pad = std::vector<std::string>{"SAME_UPPER", "SAME_LOWER", "VALID"}[pad_mode - 3];
  }
  for (size_t i = 0; i < rank; ++i) {  // an input at least as large as the dilated kernel
    const int64_t span = (k.kernel[i] - 1) * (k.dilations.empty() ? 1 : k.dilations[i]) + 1;
    k.in[i] = std::max(k.in[i], span);
  }
  k.bias = Pick(rng, 0, 3) != 0;
  k.threads = static_cast<int>(Pick(rng, 1, 2));
  return k;
}

TEST(ConvTest, Random2d) {
  std::mt19937 rng(1);
  for (int i = 0; i < 150; ++i) CheckConv(RandomCase(rng, 2), rng);
}

TEST(ConvTest, Random1dAnd3d) {
  std::mt19937 rng(2);
  for (int i = 0; i < 40; ++i) CheckConv(RandomCase(rng, 1), rng);
  for (int i = 0; i < 40; ++i) CheckConv(RandomCase(rng, 3), rng);
}

TEST(ConvTest, PointwiseUsesInputInPlace) {
  std::mt19937 rng(3);
  for (int threads : {1, 2}) {
    ConvCase k;
    k.n = 2;
    k.c = 24;
    k.m = 40;
    k.in = {20, 18};
    k.kernel = {1, 1};
    k.threads = threads;
    CheckConv(k, rng);
    k.group = 4;  // grouped pointwise
    CheckConv(k, rng);
  }
}

TEST(ConvTest, SplitRowsPathForFewOutputPositions) {
  // 5x5 outputs, one image, many output channels: the rows of W are split over threads.
  std::mt19937 rng(4);
  for (int threads : {1, 2}) {
    ConvCase k;
    k.c = 32;
    k.m = 64;
    k.in = {5, 5};
    k.kernel = {3, 3};
    k.pads = {1, 1, 1, 1};
    k.threads = threads;
    CheckConv(k, rng);
    k.kernel = {1, 1};
    k.pads = {};
    CheckConv(k, rng);  // pointwise split rows
    k.in = {9, 9};
    k.kernel = {1, 1};
    k.strides = {2, 2};  // strided 1x1 needs im2col
    CheckConv(k, rng);
  }
}

TEST(ConvTest, ManyColumnTiles) {
  // K = 64 * 9 = 576 limits a tile to a few hundred columns, so a 34x30 output needs several.
  std::mt19937 rng(5);
  for (int threads : {1, 2}) {
    ConvCase k;
    k.c = 64;
    k.m = 16;
    k.in = {34, 30};
    k.kernel = {3, 3};
    k.pads = {1, 0, 1, 2};
    k.threads = threads;
    CheckConv(k, rng);
  }
}

TEST(ConvTest, SingleInputChannelWithManyOutputs) {
  // C/group == 1 with group 1 takes the direct (depthwise) path with a multiplier of M.
  std::mt19937 rng(6);
  ConvCase k;
  k.c = 1;
  k.m = 8;
  k.in = {13, 11};
  k.kernel = {5, 3};
  k.strides = {2, 1};
  k.pads = {2, 1, 2, 1};
  CheckConv(k, rng);
}

TEST(ConvTest, FusedActivations) {
  std::mt19937 rng(7);
  for (const std::string act : {"Relu", "Sigmoid", "Clip"}) {
    for (int64_t group : {1, 4}) {  // GEMM path and depthwise path
      ConvCase k;
      k.c = 4;
      k.m = 8;
      k.group = group;
      k.in = {9, 9};
      k.kernel = {3, 3};
      k.pads = {1, 1, 1, 1};
      k.activation = act;
      if (act == "Clip") k.activation_params = {-0.3f, 0.4f};
      CheckConv(k, rng);
    }
  }
}

TEST(ConvTest, ResNetLikeLayersWithTwoThreads) {
  std::mt19937 rng(8);
  ConvCase stem;
  stem.c = 3;
  stem.m = 16;
  stem.in = {56, 56};
  stem.kernel = {7, 7};
  stem.strides = {2, 2};
  stem.pads = {3, 3, 3, 3};
  stem.threads = 2;
  stem.activation = "Relu";
  CheckConv(stem, rng);
}

class ConvErrorTest : public ::testing::Test {
 protected:
  Status Run(const std::vector<int64_t>& x_shape, const std::vector<int64_t>& w_shape,
             AttrBuilder& attrs, bool describe, const std::vector<int64_t>& b_shape = {}) {
    std::mt19937 rng(9);
    Tensor x = RandomFloats(x_shape, rng);
    Tensor w = RandomFloats(w_shape, rng);
    Tensor b = RandomFloats(b_shape.empty() ? std::vector<int64_t>{1} : b_shape, rng);
    NodeSpec spec{"Conv"};
    spec.describe_inputs = describe;
    std::vector<const Tensor*> inputs{&x, &w};
    if (!b_shape.empty()) inputs.push_back(&b);
    return RunNode(spec, attrs, inputs).status();
  }
};

TEST_F(ConvErrorTest, RankMismatchAtCreateAndRun) {
  AttrBuilder attrs;
  for (bool describe : {true, false}) {
    ExpectError(Run({1, 3, 8}, {4, 3, 3, 3}, attrs, describe), StatusCode::kInvalidArgument,
                "input X has rank 3, expected 4 (the rank of W)");
  }
}

TEST_F(ConvErrorTest, ChannelMismatch) {
  AttrBuilder attrs;
  attrs.Int("group", 2);
  for (bool describe : {true, false}) {
    ExpectError(Run({1, 6, 8, 8}, {4, 2, 3, 3}, attrs, describe), StatusCode::kInvalidArgument,
                "input X has 6 channels, expected W[1] = 2 times group 2");
  }
}

TEST_F(ConvErrorTest, BiasShapeKernelShapeAndTooSmallInput) {
  AttrBuilder none;
  ExpectError(Run({1, 3, 8, 8}, {4, 3, 3, 3}, none, false, {5}), StatusCode::kInvalidArgument,
              "input B has shape [5], expected [4]");
  AttrBuilder ks;
  ks.Ints("kernel_shape", {3, 2});
  ExpectError(Run({1, 3, 8, 8}, {4, 3, 3, 3}, ks, false), StatusCode::kInvalidArgument,
              "kernel_shape [3,2] differs from W's spatial dims [3,3]");
  ExpectError(Run({1, 3, 2, 8}, {4, 3, 3, 3}, none, false), StatusCode::kInvalidArgument,
              "spatial dim 0 of the input is 2 (padded 2), smaller than the dilated kernel 3");
  AttrBuilder strides;
  strides.Ints("strides", {1, 0});
  ExpectError(Run({1, 3, 8, 8}, {4, 3, 3, 3}, strides, true), StatusCode::kInvalidArgument,
              "strides [1,0] holds 0, expected at least 1");
  AttrBuilder pads;
  pads.Ints("pads", {1, 1});
  ExpectError(Run({1, 3, 8, 8}, {4, 3, 3, 3}, pads, false), StatusCode::kInvalidArgument,
              "pads has 2 values, expected 4");
}

TEST_F(ConvErrorTest, UnknownActivation) {
  std::mt19937 rng(10);
  Tensor x = RandomFloats({1, 2, 4, 4}, rng);
  Tensor w = RandomFloats({2, 2, 1, 1}, rng);
  AttrBuilder attrs;
  attrs.String("activation", "Tanh");
  NodeSpec spec{"FusedConv", 1, "com.epctx"};
  ExpectError(RunNode(spec, attrs, {&x, &w}).status(), StatusCode::kUnsupported,
              "activation 'Tanh' is not supported");
}

}  // namespace
}  // namespace epctx::exec::testing
