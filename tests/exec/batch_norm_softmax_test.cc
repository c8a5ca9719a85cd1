// BatchNormalization (inference) and Softmax in both its pre-13 (flatten to 2-D) and 13+
// (single axis) forms, against double-precision references.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

TEST(BatchNormTest, MatchesFormula) {
  std::mt19937 rng(51);
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 3}, std::vector<int64_t>{2, 4, 5, 6},
        std::vector<int64_t>{1, 16, 64, 40}}) {
    const int64_t c = shape[1];
    Tensor x = RandomFloats(shape, rng);
    Tensor scale = RandomFloats({c}, rng);
    Tensor bias = RandomFloats({c}, rng);
    Tensor mean = RandomFloats({c}, rng);
    Tensor var = RandomFloats({c}, rng, 0.1f, 2.0f);
    AttrBuilder attrs;
    attrs.Float("epsilon", 1e-3f);
    for (int64_t opset : {7, 9, 15}) {
      NodeSpec spec("BatchNormalization", opset);
      spec.threads = 2;
      auto r = RunNode(spec, attrs, {&x, &scale, &bias, &mean, &var});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      const auto xv = FloatsOf(x), sv = FloatsOf(scale), bv = FloatsOf(bias), mv = FloatsOf(mean),
                 vv = FloatsOf(var);
      const int64_t inner = Count(shape) / (shape[0] * c);
      std::vector<double> ref;
      for (int64_t i = 0; i < Count(shape); ++i) {
        const size_t ch = static_cast<size_t>(i / inner % c);
        ref.push_back((xv[static_cast<size_t>(i)] - double{mv[ch]}) /
                          std::sqrt(double{vv[ch]} + 1e-3) * sv[ch] +
                      bv[ch]);
      }
      ExpectClose((*r)[0], shape, ref, 1e-5, 1e-5, "BatchNormalization");
    }
  }
}

TEST(BatchNormTest, TrainingModeUsesBatchStatistics) {
  // X [2,2,2]: channel 0 holds {1,3,5,7} (mean 4, population variance 5), channel 1 holds
  // {2,2,6,6} (mean 4, variance 4).
  Tensor x = FloatTensor({2, 2, 2}, {1, 3, 2, 2, 5, 7, 6, 6});
  Tensor scale = FloatTensor({2}, {1, 2});
  Tensor bias = FloatTensor({2}, {0, 1});
  Tensor mean = FloatTensor({2}, {10, 20});
  Tensor var = FloatTensor({2}, {1, 2});
  AttrBuilder attrs;
  attrs.Int("training_mode", 1).Float("epsilon", 0.0f).Float("momentum", 0.75f);
  for (int64_t opset : {14, 15}) {
    NodeSpec spec("BatchNormalization", opset);
    spec.outputs = 3;
    auto r = RunNode(spec, attrs, {&x, &scale, &bias, &mean, &var});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const double s0 = 1 / std::sqrt(5.0);
    // channel 0: (x - 4) / sqrt(5); channel 1: (x - 4) / 2 * 2 + 1
    ExpectClose((*r)[0], {2, 2, 2}, {-3 * s0, -s0, -1, -1, s0, 3 * s0, 3, 3}, 1e-6, 1e-6,
                "training Y");
    // running = input * 0.75 + batch * 0.25
    ExpectClose((*r)[1], {2}, {8.5, 16}, 1e-6, 1e-6, "running mean");
    ExpectClose((*r)[2], {2}, {2, 2.5}, 1e-6, 1e-6, "running var");
  }
}

TEST(BatchNormTest, Errors) {
  std::mt19937 rng(52);
  Tensor x = RandomFloats({1, 3, 2, 2}, rng);
  Tensor p3 = RandomFloats({3}, rng);
  Tensor p4 = RandomFloats({4}, rng);
  AttrBuilder training;
  training.Int("training_mode", 1);
  ExpectError(
      RunNode(NodeSpec("BatchNormalization", 9), training, {&x, &p3, &p3, &p3, &p3}).status(),
      StatusCode::kInvalidArgument, "training_mode needs opset 14 or later, not 9");
  NodeSpec with_running("BatchNormalization", 15);
  with_running.outputs = 3;
  AttrBuilder inference;
  ExpectError(RunNode(with_running, inference, {&x, &p3, &p3, &p3, &p3}).status(),
              StatusCode::kUnsupported, "output 1 (running statistics) is only supported with");
  AttrBuilder none;
  ExpectError(RunNode(NodeSpec("BatchNormalization", 15), none, {&x, &p3, &p4, &p3, &p3}).status(),
              StatusCode::kInvalidArgument, "input B has shape [4], expected [3]");
}

// Softmax over `len` elements `inner` apart, for each of `outer` blocks.
std::vector<double> ReferenceSoftmax(const std::vector<float>& x, int64_t outer, int64_t len,
                                     int64_t inner) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double max = -1e300, sum = 0;
      for (int64_t a = 0; a < len; ++a) max = std::max(max, double{x[(o * len + a) * inner + i]});
      for (int64_t a = 0; a < len; ++a) sum += std::exp(x[(o * len + a) * inner + i] - max);
      for (int64_t a = 0; a < len; ++a) {
        y[(o * len + a) * inner + i] = std::exp(x[(o * len + a) * inner + i] - max) / sum;
      }
    }
  }
  return y;
}

TEST(SoftmaxTest, SingleAxisFromOpset13) {
  std::mt19937 rng(53);
  const std::vector<int64_t> shape{3, 4, 5, 6};
  Tensor x = RandomFloats(shape, rng, -5, 5);
  for (int64_t axis : {-1, 0, 1, 2, -3, 3}) {
    AttrBuilder attrs;
    attrs.Int("axis", axis);
    auto r = RunNode(NodeSpec("Softmax", 13), attrs, {&x});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const size_t a = static_cast<size_t>(axis < 0 ? axis + 4 : axis);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < a; ++d) outer *= shape[d];
    for (size_t d = a + 1; d < 4; ++d) inner *= shape[d];
    ExpectClose((*r)[0], shape, ReferenceSoftmax(FloatsOf(x), outer, shape[a], inner), 1e-6, 1e-5,
                "Softmax-13 axis " + std::to_string(axis));
  }
  AttrBuilder none;  // default axis -1, on a large input split over threads
  Tensor big = RandomFloats({300, 1000}, rng, -5, 5);
  NodeSpec spec("Softmax", 13);
  spec.threads = 2;
  auto r = RunNode(spec, none, {&big});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {300, 1000}, ReferenceSoftmax(FloatsOf(big), 300, 1000, 1), 1e-7, 1e-5,
              "Softmax-13 default axis");
}

TEST(SoftmaxTest, LargeLogitsDoNotOverflow) {
  // exp(500) overflows float: the kernel must subtract each slice's maximum first.
  std::mt19937 rng(55);
  const std::vector<int64_t> shape{2, 6, 7};
  Tensor x = RandomFloats(shape, rng, -500, 500);
  for (int64_t axis : {1, 2}) {
    AttrBuilder attrs;
    attrs.Int("axis", axis);
    auto r = RunNode(NodeSpec("Softmax", 13), attrs, {&x});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const int64_t outer = axis == 1 ? 2 : 12, len = shape[static_cast<size_t>(axis)];
    ExpectClose((*r)[0], shape, ReferenceSoftmax(FloatsOf(x), outer, len, axis == 1 ? 7 : 1), 1e-6,
                1e-5, "Softmax large logits axis " + std::to_string(axis));
  }
}

TEST(SoftmaxTest, FlattensBeforeOpset13) {
  std::mt19937 rng(54);
  const std::vector<int64_t> shape{3, 4, 5};
  Tensor x = RandomFloats(shape, rng, -5, 5);
  for (int64_t axis : {0, 1, 2, -1, 3}) {
    AttrBuilder attrs;
    attrs.Int("axis", axis);
    auto r = RunNode(NodeSpec("Softmax", 11), attrs, {&x});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const size_t a = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    int64_t outer = 1;
    for (size_t d = 0; d < a; ++d) outer *= shape[d];
    ExpectClose((*r)[0], shape, ReferenceSoftmax(FloatsOf(x), outer, 60 / outer, 1), 1e-6, 1e-5,
                "Softmax-11 axis " + std::to_string(axis));
  }
  AttrBuilder none;  // default axis 1: rows of 20
  auto r = RunNode(NodeSpec("Softmax", 1), none, {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], shape, ReferenceSoftmax(FloatsOf(x), 3, 20, 1), 1e-6, 1e-5,
              "Softmax-1 default axis");
  AttrBuilder bad;
  bad.Int("axis", 3);
  ExpectError(RunNode(NodeSpec("Softmax", 13), bad, {&x}).status(), StatusCode::kInvalidArgument,
              "axis 3 is out of range for rank 3");
}

}  // namespace
}  // namespace epctx::exec::testing
