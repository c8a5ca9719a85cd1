// ONNX Runtime GenAI's normalization kernels (SimplifiedLayerNormalization, com.microsoft
// SkipSimplifiedLayerNormalization and SkipLayerNormalization) against double-precision
// references of ONNX Runtime's formulas: the optional inputs and outputs, the shapes ORT lets
// broadcast, and the exact refusals of the shapes it refuses. tests/genai/norm_models.json runs
// the same ops against ONNX Runtime itself.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

// Rows of `len` of x (+ skip, read modulo its size, + bias) normalized as ORT does; `rms` for the
// simplified form. Fills the per-row mean (0 when simplified), inverse deviation and sums.
struct NormReference {
  std::vector<double> y, mean, inv_std, sum;
};
NormReference NormRows(const std::vector<float>& x, const std::vector<float>* skip,
                       const std::vector<float>* bias, const std::vector<float>& gamma,
                       const std::vector<float>* beta, int64_t len, double epsilon, bool rms) {
  NormReference r;
  const auto rows = static_cast<int64_t>(x.size()) / len;
  for (int64_t row = 0; row < rows; ++row) {
    std::vector<double> v(static_cast<size_t>(len));
    for (int64_t i = 0; i < len; ++i) {
      const int64_t e = row * len + i;
      v[i] = x[e];
      if (skip != nullptr) v[i] += (*skip)[static_cast<size_t>(e) % skip->size()];
      if (bias != nullptr) v[i] += (*bias)[i];
      r.sum.push_back(v[i]);
    }
    double mean = 0, var = 0;
    for (double a : v) mean += a;
    mean /= len;
    for (double a : v) var += rms ? a * a : (a - mean) * (a - mean);
    var /= len;
    if (rms) mean = 0;
    const double inv = 1 / std::sqrt(var + epsilon);
    for (int64_t i = 0; i < len; ++i) {
      r.y.push_back((v[i] - mean) * inv * gamma[i] + (beta != nullptr ? (*beta)[i] : 0.0));
    }
    r.mean.push_back(mean);
    r.inv_std.push_back(inv);
  }
  return r;
}

TEST(SimplifiedLayerNormTest, RowsAndInverseRms) {
  std::mt19937 rng(271);
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{1, 7, 64}, {1, 1, 64}, {2, 5, 45}, {3, 1}}) {
    const int64_t h = shape.back();
    Tensor x = RandomFloats(shape, rng, -2, 2);
    Tensor scale = RandomFloats({h}, rng, 0.5, 1.5);
    AttrBuilder attrs;
    attrs.Float("epsilon", 1e-6f).Int("stash_type", 1);
    NodeSpec spec("SimplifiedLayerNormalization", 17);
    spec.outputs = 2;
    auto r = RunNode(spec, attrs, {&x, &scale});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const NormReference ref =
        NormRows(FloatsOf(x), nullptr, nullptr, FloatsOf(scale), nullptr, h, 1e-6, /*rms=*/true);
    std::vector<int64_t> stat_shape = shape;
    stat_shape.back() = 1;
    ExpectClose((*r)[0], shape, ref.y, 1e-5, 1e-5, "Y");
    ExpectClose((*r)[1], stat_shape, ref.inv_std, 1e-6, 1e-5, "inv_std_var");
  }
}

// Normalized from axis 1: one statistic per batch, and a scale of the normalized shape, of one
// row broadcast inside it, or varying per batch (ONNX Runtime 1.30 broadcasts the scale to X).
TEST(SimplifiedLayerNormTest, AxisAndScaleBroadcasts) {
  std::mt19937 rng(272);
  Tensor x = RandomFloats({2, 3, 4}, rng, -2, 2);
  const std::vector<float> xv = FloatsOf(x);
  struct Case {
    int64_t axis;
    std::vector<int64_t> scale_shape;
    // Scale element for X element (b, s, h).
    int64_t (*index)(int64_t b, int64_t s, int64_t h);
  };
  const Case cases[] = {
      {1, {3, 4}, [](int64_t, int64_t s, int64_t h) { return s * 4 + h; }},
      {1, {1, 4}, [](int64_t, int64_t, int64_t h) { return h; }},
      {-1, {2, 1, 4}, [](int64_t b, int64_t, int64_t h) { return b * 4 + h; }},
      {-1, {4}, [](int64_t, int64_t, int64_t h) { return h; }},
  };
  for (const Case& c : cases) {
    Tensor scale = RandomFloats(c.scale_shape, rng, 0.5, 1.5);
    const std::vector<float> sv = FloatsOf(scale);
    AttrBuilder attrs;
    attrs.Int("axis", c.axis).Float("epsilon", 0.01f);
    NodeSpec spec("SimplifiedLayerNormalization", 17);
    spec.outputs = 2;
    auto r = RunNode(spec, attrs, {&x, &scale});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const int64_t len = c.axis == 1 ? 12 : 4;
    std::vector<double> y, inv_std;
    for (int64_t row = 0; row < 24 / len; ++row) {
      double ms = 0;
      for (int64_t i = 0; i < len; ++i) ms += double{xv[row * len + i]} * xv[row * len + i];
      const double inv = 1 / std::sqrt(ms / len + 0.01);
      inv_std.push_back(inv);
      for (int64_t i = 0; i < len; ++i) {
        const int64_t e = row * len + i;
        y.push_back(xv[e] * inv * sv[c.index(e / 12, e / 4 % 3, e % 4)]);
      }
    }
    const std::string what = fmt::format("axis {} scale {}", c.axis, ShapeToString(c.scale_shape));
    ExpectClose((*r)[0], {2, 3, 4}, y, 1e-5, 1e-5, what);
    ExpectClose((*r)[1],
                c.axis == 1 ? std::vector<int64_t>{2, 1, 1} : std::vector<int64_t>{2, 3, 1},
                inv_std, 1e-6, 1e-5, what + " inv_std_var");
  }
}

TEST(SimplifiedLayerNormTest, DefaultEpsilonAndRefusals) {
  // mean square 1e-8, far below the default epsilon 1e-5: y = x / sqrt(1e-5 + 1e-8).
  Tensor x = FloatTensor({1, 2}, {1e-4f, -1e-4f});
  Tensor scale = FloatTensor({2}, {1, 2});
  AttrBuilder none;
  auto r = RunNode(NodeSpec("SimplifiedLayerNormalization", 17), none, {&x, &scale});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const double d = std::sqrt(1e-5 + 1e-8);
  ExpectClose((*r)[0], {1, 2}, {1e-4 / d, -2e-4 / d}, 1e-9, 1e-5, "default epsilon");

  Tensor x3 = FloatTensor({2, 3, 4}, std::vector<float>(24, 1.0f));
  Tensor flat = FloatTensor({12}, std::vector<float>(12, 1.0f));
  AttrBuilder axis1;
  axis1.Int("axis", 1);
  ExpectError(RunNode(NodeSpec("SimplifiedLayerNormalization", 17), axis1, {&x3, &flat}).status(),
              StatusCode::kInvalidArgument,
              "input scale has shape [12], which does not broadcast to X's shape [2,3,4]");
  Tensor deep = FloatTensor({1, 1, 1, 4}, {1, 1, 1, 1});
  ExpectError(RunNode(NodeSpec("SimplifiedLayerNormalization", 17), none, {&x3, &deep}).status(),
              StatusCode::kInvalidArgument, "input scale has rank 4, more than X's 3");
  Tensor empty = FloatTensor({2, 0}, {});
  Tensor no_scale = FloatTensor({0}, {});
  ExpectError(
      RunNode(NodeSpec("SimplifiedLayerNormalization", 17), none, {&empty, &no_scale}).status(),
      StatusCode::kInvalidArgument, "X has shape [2,0], whose dims from axis 1 on hold no element");
  Tensor ints = Int64Tensor({1, 2}, {1, 2});
  ExpectError(RunNode(NodeSpec("SimplifiedLayerNormalization", 17), none, {&ints, &scale}).status(),
              StatusCode::kUnsupported,
              "input 0 has type int64, which SimplifiedLayerNormalization does not run on (it "
              "takes float32)");
}

TEST(SkipLayerNormTest, EveryOptionalInputAndOutput) {
  std::mt19937 rng(273);
  for (bool simplified : {true, false}) {
    const char* op = simplified ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization";
    for (const std::vector<int64_t>& shape :
         {std::vector<int64_t>{1, 7, 64}, {1, 1, 64}, {2, 5, 45}, {9, 40}}) {
      for (int with : {0, 1, 2, 3}) {  // bit 0: bias, bit 1: beta (SkipLayerNormalization only)
        const bool has_bias = (with & 1) != 0;
        const bool has_beta = (with & 2) != 0 && !simplified;
        if ((with & 2) != 0 && simplified) continue;
        const int64_t h = shape.back();
        Tensor x = RandomFloats(shape, rng, -2, 2);
        Tensor skip = RandomFloats(shape, rng, -2, 2);
        Tensor gamma = RandomFloats({h}, rng, 0.5, 1.5);
        Tensor beta = RandomFloats({h}, rng, -0.5, 0.5);
        Tensor bias = RandomFloats({h}, rng, -0.5, 0.5);
        std::vector<const Tensor*> inputs = {&x, &skip, &gamma};
        if (!simplified) inputs.push_back(has_beta ? &beta : nullptr);
        inputs.push_back(has_bias ? &bias : nullptr);
        AttrBuilder attrs;
        attrs.Float("epsilon", 1e-6f);
        NodeSpec spec(op, 1, kMs);
        spec.outputs = 4;
        auto r = RunNode(spec, attrs, inputs);
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        const auto bv = FloatsOf(bias), betav = FloatsOf(beta), sv = FloatsOf(skip);
        const NormReference ref =
            NormRows(FloatsOf(x), &sv, has_bias ? &bv : nullptr, FloatsOf(gamma),
                     has_beta ? &betav : nullptr, h, 1e-6, simplified);
        std::vector<int64_t> stat_shape = shape;
        stat_shape.back() = 1;
        const std::string what = fmt::format("{} {} with {}", op, ShapeToString(shape), with);
        ExpectClose((*r)[0], shape, ref.y, 1e-5, 1e-5, what + " output");
        if (simplified) {
          ASSERT_EQ((*r)[1].shape(), stat_shape);
          for (float m : FloatsOf((*r)[1])) EXPECT_EQ(m, 0.0f) << what;
        } else {
          ExpectClose((*r)[1], stat_shape, ref.mean, 1e-6, 1e-5, what + " mean");
        }
        ExpectClose((*r)[2], stat_shape, ref.inv_std, 1e-6, 1e-5, what + " inv_std_var");
        ExpectClose((*r)[3], shape, ref.sum, 1e-6, 1e-6, what + " input_skip_bias_sum");
      }
    }
  }
}

// A skip of [S, H] or [1, S, H] under a batch of 2 repeats over the batch; outputs left out are
// not made; the default epsilon is 1e-12.
TEST(SkipLayerNormTest, BroadcastSkipAbsentOutputsAndDefaultEpsilon) {
  std::mt19937 rng(274);
  Tensor x = RandomFloats({2, 3, 8}, rng, -2, 2);
  Tensor gamma = RandomFloats({8}, rng, 0.5, 1.5);
  const auto xv = FloatsOf(x), gv = FloatsOf(gamma);
  for (const std::vector<int64_t>& skip_shape : {std::vector<int64_t>{3, 8}, {1, 3, 8}}) {
    Tensor skip = RandomFloats(skip_shape, rng, -2, 2);
    const auto sv = FloatsOf(skip);
    AttrBuilder attrs;
    attrs.Float("epsilon", 1e-6f);
    NodeSpec spec("SkipSimplifiedLayerNormalization", 1, kMs);
    spec.outputs = 4;
    spec.omitted_outputs = {1, 2};
    auto r = RunNode(spec, attrs, {&x, &skip, &gamma});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const NormReference ref = NormRows(xv, &sv, nullptr, gv, nullptr, 8, 1e-6, true);
    const std::string what = fmt::format("skip {}", ShapeToString(skip_shape));
    ExpectClose((*r)[0], {2, 3, 8}, ref.y, 1e-5, 1e-5, what);
    EXPECT_TRUE((*r)[1].empty()) << what;
    EXPECT_TRUE((*r)[2].empty()) << what;
    ExpectClose((*r)[3], {2, 3, 8}, ref.sum, 1e-6, 1e-6, what + " sum");
  }
  // Rows of mean square 1e-8: epsilon 1e-12 leaves them normalized to about 1.
  Tensor tiny = FloatTensor({1, 1, 2}, {1e-4f, -1e-4f});
  Tensor zero = FloatTensor({1, 1, 2}, {0, 0});
  Tensor ones = FloatTensor({2}, {1, 1});
  AttrBuilder none;
  for (const char* op : {"SkipSimplifiedLayerNormalization", "SkipLayerNormalization"}) {
    auto r = RunNode(NodeSpec(op, 1, kMs), none, {&tiny, &zero, &ones});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const double inv = 1 / std::sqrt(1e-8 + 1e-12);
    ExpectClose((*r)[0], {1, 1, 2}, {1e-4 * inv, -1e-4 * inv}, 1e-6, 1e-5, op);
  }
}

TEST(SkipLayerNormTest, ShapesOnnxRuntimeRefuses) {
  const auto floats = [](std::vector<int64_t> shape) {
    return FloatTensor(shape, std::vector<float>(static_cast<size_t>(Count(shape)), 0.5f));
  };
  const Tensor x = floats({2, 3, 4}), gamma = floats({4});
  AttrBuilder none;
  const NodeSpec spec("SkipLayerNormalization", 1, kMs);
  const auto run = [&](const Tensor& input, const Tensor& skip, const Tensor& g,
                       const Tensor* beta = nullptr, const Tensor* bias = nullptr) {
    return RunNode(spec, none, {&input, &skip, &g, beta, bias}).status();
  };
  const Tensor x4 = floats({1, 2, 3, 4});
  ExpectError(run(x4, x4, gamma), StatusCode::kInvalidArgument,
              "input input has rank 4, expected 2 or 3");
  const Tensor skip1 = floats({4});
  ExpectError(run(x, skip1, gamma), StatusCode::kInvalidArgument,
              "input skip has rank 1, expected 2 or 3");
  const Tensor skip_rows = floats({2, 2, 4});
  ExpectError(run(x, skip_rows, gamma), StatusCode::kInvalidArgument,
              "input skip has shape [2,2,4], which is neither input's shape [2,3,4] nor, for "
              "a 3-D input, one with its last two dims");
  const Tensor tokens = floats({3, 4}), tokens_skip = floats({1, 3, 4});
  ExpectError(run(tokens, tokens_skip, gamma), StatusCode::kInvalidArgument,
              "input skip has shape [1,3,4], which is neither input's shape [3,4]");
  const Tensor gamma5 = floats({5}), gamma2d = floats({1, 4});
  ExpectError(run(x, x, gamma5), StatusCode::kInvalidArgument,
              "input gamma has shape [5], expected [4] (the hidden size)");
  ExpectError(run(x, x, gamma2d), StatusCode::kInvalidArgument,
              "input gamma has shape [1,4], expected [4] (the hidden size)");
  ExpectError(run(x, x, gamma, &gamma5), StatusCode::kInvalidArgument,
              "input beta has shape [5], expected [4] (the hidden size)");
  ExpectError(run(x, x, gamma, nullptr, &gamma5), StatusCode::kInvalidArgument,
              "input bias has shape [5], expected [4] (the hidden size)");
  const Tensor hollow = floats({2, 3, 0}), no_gamma = floats({0});
  ExpectError(run(hollow, hollow, no_gamma), StatusCode::kInvalidArgument,
              "input input has shape [2,3,0]: the hidden size is 0");
  const Tensor no_skip = floats({0, 3, 4});
  ExpectError(run(x, no_skip, gamma), StatusCode::kInvalidArgument,
              "input skip has shape [0,3,4], with nothing to add");
  AttrBuilder negative;
  negative.Float("epsilon", -1.0f);
  ExpectError(RunNode(spec, negative, {&x, &x, &gamma}).status(), StatusCode::kInvalidArgument,
              "epsilon is -1, it must be 0 or more");
  // An empty batch is not an error: nothing to normalize.
  const Tensor none_rows = floats({0, 3, 4});
  auto r = RunNode(spec, none, {&none_rows, &none_rows, &gamma});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{0, 3, 4}));
}

// Rows split over threads give what one thread gives, bit for bit.
TEST(SkipLayerNormTest, ThreadsAgreeWithOneThread) {
  std::mt19937 rng(276);
  Tensor x = RandomFloats({1, 128, 576}, rng, -2, 2);
  Tensor skip = RandomFloats({1, 128, 576}, rng, -2, 2);
  Tensor gamma = RandomFloats({576}, rng, 0.5, 1.5);
  AttrBuilder attrs;
  attrs.Float("epsilon", 1e-6f);
  std::vector<std::vector<float>> outs;
  for (int threads : {1, 2}) {
    NodeSpec skip_spec("SkipSimplifiedLayerNormalization", 1, kMs);
    NodeSpec plain_spec("SimplifiedLayerNormalization", 17);
    skip_spec.threads = plain_spec.threads = threads;
    auto a = RunNode(skip_spec, attrs, {&x, &skip, &gamma});
    auto b = RunNode(plain_spec, attrs, {&x, &gamma});
    ASSERT_TRUE(a.ok() && b.ok());
    outs.push_back(FloatsOf((*a)[0]));
    outs.push_back(FloatsOf((*b)[0]));
  }
  EXPECT_EQ(outs[0], outs[2]);
  EXPECT_EQ(outs[1], outs[3]);
}

}  // namespace
}  // namespace epctx::exec::testing
