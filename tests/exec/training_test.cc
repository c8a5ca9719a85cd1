// The ai.onnx.preview.training optimizers (Adagrad, Adam, Momentum standard and Nesterov): one
// update step on values chosen so the results can be worked out by hand (square roots of perfect
// squares, bias corrections that come out round), N = 2 tensors in double with the outputs in
// their list order, and the messages for malformed attributes and inputs.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

constexpr const char* kTraining = "ai.onnx.preview.training";

NodeSpec Optimizer(const std::string& op, size_t outputs) {
  NodeSpec spec(op, 1, kTraining);
  spec.outputs = outputs;
  return spec;
}

Tensor Scalar(float v) {
  return MakeTensor(DataType::kFloat32, {}, &v);
}
Tensor UpdateCount(int64_t v) {
  return MakeTensor(DataType::kInt64, {}, &v);
}

Tensor DoubleTensor(std::vector<int64_t> shape, const std::vector<double>& values) {
  EXPECT_EQ(Count(shape), static_cast<int64_t>(values.size()));
  return MakeTensor(DataType::kFloat64, std::move(shape), values.data());
}

void ExpectDoubles(const Tensor& t, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(t.dtype(), DataType::kFloat64) << what;
  ASSERT_EQ(t.element_count(), static_cast<int64_t>(want.size())) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(t.data_as<double>()[i], want[i], 1e-12) << what << "[" << i << "]";
  }
}

TEST(TrainingTest, AdagradDecaysTheRateAndAccumulatesSquaredGradients) {
  AttrBuilder a;
  a.Float("decay_factor", 1.0f).Float("norm_coefficient", 0.5f).Float("epsilon", 0.0f);
  // r = 0.5 / (1 + 1 * 1) = 0.25.
  Tensor r = Scalar(0.5f), t = UpdateCount(1);
  Tensor x = FloatTensor({2}, {2, -2});
  Tensor g = FloatTensor({2}, {1, 3});   // regularized: 0.5 * x + g = [2, 2]
  Tensor h = FloatTensor({2}, {0, 12});  // + 4 = [4, 16], square roots [2, 4]
  auto y = RunNode(Optimizer("Adagrad", 2), a, {&r, &t, &x, &g, &h});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->size(), 2u);
  // x - 0.25 * 2 / [2, 4]
  ExpectClose((*y)[0], {2}, {1.75, -2.125}, 0, 1e-6, "X_new");
  ExpectClose((*y)[1], {2}, {4, 16}, 0, 1e-6, "H_new");
}

TEST(TrainingTest, AdamCorrectsTheRateForBiasAfterTheFirstUpdate) {
  AttrBuilder a;
  a.Float("alpha", 0.5f)
      .Float("beta", 0.96f)
      .Float("epsilon", 0.0f)
      .Float("norm_coefficient_post", 0.5f);
  Tensor r = Scalar(1.0f);
  Tensor x = FloatTensor({2}, {3, 0});
  Tensor g = FloatTensor({2}, {2, -5});
  Tensor v = FloatTensor({2}, {0, 2});
  Tensor h = FloatTensor({2}, {0, 0});
  // V_new = 0.5 v + 0.5 g = [1, -1.5]; H_new = 0.96 h + 0.04 g^2 = [0.16, 1], roots [0.4, 1].
  {
    // T = 1: R * sqrt(1 - 0.96) / (1 - 0.5) = 0.4. X_new = 0.5 * (x - 0.4 V_new / root).
    Tensor t = UpdateCount(1);
    auto y = RunNode(Optimizer("Adam", 3), a, {&r, &t, &x, &g, &v, &h});
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    ASSERT_EQ(y->size(), 3u);
    ExpectClose((*y)[0], {2}, {1.0, 0.3}, 0, 1e-5, "X_new, T=1");
    ExpectClose((*y)[1], {2}, {1, -1.5}, 0, 1e-6, "V_new");
    ExpectClose((*y)[2], {2}, {0.16, 1}, 0, 1e-5, "H_new");
  }
  {
    // T = 0: no correction, the rate is R = 1.
    Tensor t = UpdateCount(0);
    auto y = RunNode(Optimizer("Adam", 3), a, {&r, &t, &x, &g, &v, &h});
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    ExpectClose((*y)[0], {2}, {0.5 * (3 - 1 / 0.4), 0.5 * 1.5}, 0, 1e-5, "X_new, T=0");
  }
}

TEST(TrainingTest, MomentumTakesTheWholeGradientOnlyAtTheFirstUpdate) {
  Tensor r = Scalar(0.1f);
  Tensor x = FloatTensor({1}, {2});
  Tensor g = FloatTensor({1}, {1});  // regularized: 0.5 * 2 + 1 = 2
  Tensor v = FloatTensor({1}, {4});
  const struct {
    const char* mode;
    int64_t t;
    double x_new, v_new;
  } cases[] = {
      {"standard", 0, 2 - 0.1 * 4, 0.5 * 4 + 1 * 2},       // V_new 4
      {"standard", 3, 2 - 0.1 * 2.5, 0.5 * 4 + 0.25 * 2},  // V_new 2.5
      {"nesterov", 3, 2 - 0.1 * (2 + 0.5 * 2.5), 2.5},     // G + alpha * V_new
      {"nesterov", 0, 2 - 0.1 * (2 + 0.5 * 4), 4},
  };
  for (const auto& c : cases) {
    AttrBuilder a;
    a.Float("alpha", 0.5f)
        .Float("beta", 0.25f)
        .Float("norm_coefficient", 0.5f)
        .String("mode", c.mode);
    Tensor t = UpdateCount(c.t);
    auto y = RunNode(Optimizer("Momentum", 2), a, {&r, &t, &x, &g, &v});
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    const std::string what = std::string(c.mode) + " T=" + std::to_string(c.t);
    ExpectClose((*y)[0], {1}, {c.x_new}, 0, 1e-6, what + " X_new");
    ExpectClose((*y)[1], {1}, {c.v_new}, 0, 1e-6, what + " V_new");
  }
}

TEST(TrainingTest, SeveralDoubleTensorsComeOutInListOrder) {
  AttrBuilder a;
  a.Float("alpha", 0.5f)
      .Float("beta", 1.0f)
      .Float("norm_coefficient", 0.0f)
      .String("mode", "standard");
  double rate = 0.5;
  Tensor r = MakeTensor(DataType::kFloat64, {}, &rate);
  Tensor t = UpdateCount(1);
  Tensor x1 = DoubleTensor({1}, {1});
  Tensor x2 = DoubleTensor({2}, {10, 20});
  Tensor g1 = DoubleTensor({1}, {2});
  Tensor g2 = DoubleTensor({2}, {4, -4});
  Tensor v1 = DoubleTensor({1}, {2});
  Tensor v2 = DoubleTensor({2}, {0, 8});
  // V_new = 0.5 v + g; X_new = x - 0.5 V_new.
  auto y = RunNode(Optimizer("Momentum", 4), a, {&r, &t, &x1, &x2, &g1, &g2, &v1, &v2});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->size(), 4u);
  ExpectDoubles((*y)[0], {1 - 1.5}, "X1_new");
  ExpectDoubles((*y)[1], {10 - 2, 20 - 0}, "X2_new");
  ExpectDoubles((*y)[2], {3}, "V1_new");
  ExpectDoubles((*y)[3], {4, 0}, "V2_new");
}

TEST(TrainingTest, MalformedAttributesAndInputsAreRefusedWithTheirName) {
  Tensor r = Scalar(0.1f), t = UpdateCount(0);
  Tensor x = FloatTensor({2}, {1, 2});
  Tensor g = FloatTensor({2}, {1, 2});
  Tensor v = FloatTensor({2}, {1, 2});
  // AttrBuilder holds views into its own storage: one builder per node, never copied.
  const auto momentum = [](AttrBuilder& a, const std::string& mode) {
    a.Float("alpha", 0.9f).Float("beta", 1.0f).Float("norm_coefficient", 0.0f).String("mode", mode);
  };
  {
    AttrBuilder a;
    momentum(a, "heavy-ball");
    auto y = RunNode(Optimizer("Momentum", 2), a, {&r, &t, &x, &g, &v});
    ExpectError(y.status(), StatusCode::kInvalidArgument,
                "mode is 'heavy-ball', expected 'standard' or 'nesterov'");
  }
  {
    // Momentum's attributes have no defaults.
    AttrBuilder a;
    a.String("mode", "standard");
    auto y = RunNode(Optimizer("Momentum", 2), a, {&r, &t, &x, &g, &v});
    ExpectError(y.status(), StatusCode::kInvalidArgument, "required attribute 'alpha'");
  }
  AttrBuilder standard;
  momentum(standard, "standard");
  {
    // Adam takes four lists: R, T and 5 tensors fit none.
    auto y = RunNode(Optimizer("Adam", 3), AttrBuilder(), {&r, &t, &x, &g, &v});
    ExpectError(y.status(), StatusCode::kInvalidArgument,
                "Adam takes R, T and 4 lists of N tensors (X..., G..., V..., H...), so 2 + 4 * N "
                "inputs; the node has 5");
  }
  {
    Tensor g3 = FloatTensor({3}, {1, 2, 3});
    auto y = RunNode(Optimizer("Momentum", 2), standard, {&r, &t, &x, &g3, &v});
    ExpectError(y.status(), StatusCode::kInvalidArgument,
                "Momentum: G_1 has shape [3], but X_1 has shape [2]");
  }
  {
    Tensor t_float = Scalar(0);
    auto y = RunNode(Optimizer("Adagrad", 2), AttrBuilder(), {&r, &t_float, &x, &g, &v});
    ExpectError(y.status(), StatusCode::kInvalidArgument, "Adagrad: T has type float32");
  }
  {
    // Only seen at run time when the compiler knows nothing of the inputs.
    NodeSpec spec = Optimizer("Momentum", 2);
    spec.describe_inputs = false;
    Tensor r2 = FloatTensor({2}, {0.1f, 0.2f});
    auto y = RunNode(spec, standard, {&r2, &t, &x, &g, &v});
    ExpectError(y.status(), StatusCode::kInvalidArgument,
                "Momentum: R has shape [2], expected a scalar");
    Tensor v_double = DoubleTensor({2}, {1, 2});
    y = RunNode(spec, standard, {&r, &t, &x, &g, &v_double});
    ExpectError(y.status(), StatusCode::kInvalidArgument,
                "Momentum: V_1 is float64 [2], but X_1 is float32 [2]");
  }
}

}  // namespace
}  // namespace epctx::exec::testing
