// ONNX Runtime's GELU-family kernels (com.microsoft FastGelu, BiasGelu, Gelu, QuickGelu) against
// double-precision references of their formulas, with and without a bias, on one and two
// threads, and the inputs ONNX Runtime refuses. tests/genai/norm_models.json runs the same ops
// against ONNX Runtime itself.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

double Gelu(double v) {
  return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
}
double FastGelu(double v) {
  return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
}

TEST(ContribGeluTest, FormulasWithAndWithoutBias) {
  std::mt19937 rng(275);
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{1, 7, 64}, {2, 5, 45}, {3}, {1, 1, 4096}}) {
    const int64_t h = shape.back();
    Tensor x = RandomFloats(shape, rng, -6, 6);
    Tensor bias = RandomFloats({h}, rng, -1, 1);
    const auto xv = FloatsOf(x), bv = FloatsOf(bias);
    std::vector<double> fast, fast_bias, bias_gelu, gelu, quick, quick1;
    for (size_t i = 0; i < xv.size(); ++i) {
      const double v = xv[i], vb = v + bv[i % static_cast<size_t>(h)];
      fast.push_back(FastGelu(v));
      fast_bias.push_back(FastGelu(vb));
      bias_gelu.push_back(Gelu(vb));
      gelu.push_back(Gelu(v));
      quick.push_back(v / (1 + std::exp(-1.702 * v)));
      quick1.push_back(v / (1 + std::exp(-v)));
    }
    AttrBuilder none, alpha1;
    alpha1.Float("alpha", 1.0f);
    const std::string what = ShapeToString(shape);
    for (int threads : {1, 2}) {
      NodeSpec fast_spec("FastGelu", 1, kMs), bias_spec("BiasGelu", 1, kMs),
          gelu_spec("Gelu", 1, kMs), quick_spec("QuickGelu", 1, kMs);
      fast_spec.threads = bias_spec.threads = gelu_spec.threads = quick_spec.threads = threads;
      auto a = RunNode(fast_spec, none, {&x});
      auto b = RunNode(fast_spec, none, {&x, &bias});
      auto c = RunNode(bias_spec, none, {&x, &bias});
      auto d = RunNode(quick_spec, none, {&x});
      auto e = RunNode(quick_spec, alpha1, {&x});
      auto f = RunNode(gelu_spec, none, {&x});
      for (auto* r : {&a, &b, &c, &d, &e, &f}) ASSERT_TRUE(r->ok()) << r->status().ToString();
      ExpectClose((*a)[0], shape, fast, 1e-6, 1e-5, "FastGelu " + what);
      ExpectClose((*b)[0], shape, fast_bias, 1e-6, 1e-5, "FastGelu with bias " + what);
      ExpectClose((*c)[0], shape, bias_gelu, 1e-6, 1e-5, "BiasGelu " + what);
      ExpectClose((*d)[0], shape, quick, 1e-6, 1e-5, "QuickGelu " + what);
      ExpectClose((*e)[0], shape, quick1, 1e-6, 1e-5, "QuickGelu alpha 1 " + what);
      ExpectClose((*f)[0], shape, gelu, 1e-6, 1e-5, "Gelu " + what);
    }
  }
}

TEST(ContribGeluTest, Refusals) {
  Tensor scalar = FloatTensor({}, {0.5f});
  Tensor x = FloatTensor({2, 4}, std::vector<float>(8, 0.5f));
  Tensor bias2d = FloatTensor({1, 4}, {1, 2, 3, 4});
  Tensor bias3 = FloatTensor({3}, {1, 2, 3});
  AttrBuilder none;
  ExpectError(RunNode(NodeSpec("FastGelu", 1, kMs), none, {&scalar}).status(),
              StatusCode::kInvalidArgument, "input X has rank 0, expected 1 or more");
  ExpectError(RunNode(NodeSpec("FastGelu", 1, kMs), none, {&x, &bias2d}).status(),
              StatusCode::kInvalidArgument,
              "input bias has shape [1,4], expected [4] (the last dim of X)");
  ExpectError(RunNode(NodeSpec("BiasGelu", 1, kMs), none, {&x, &bias3}).status(),
              StatusCode::kInvalidArgument,
              "input B has shape [3], expected [4] (the last dim of A)");
  ExpectError(RunNode(NodeSpec("BiasGelu", 1, kMs), none, {&x, nullptr}).status(),
              StatusCode::kInvalidArgument, "required input B is missing");
  Tensor ints = Int64Tensor({2}, {1, 2});
  ExpectError(RunNode(NodeSpec("QuickGelu", 1, kMs), none, {&ints}).status(),
              StatusCode::kUnsupported,
              "input 0 has type int64, which QuickGelu does not run on (it takes float32)");
  // QuickGelu takes a scalar, as ONNX Runtime does.
  auto r = RunNode(NodeSpec("QuickGelu", 1, kMs), none, {&scalar});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {}, {0.5 / (1 + std::exp(-1.702 * 0.5))}, 1e-7, 1e-6, "scalar");
}

}  // namespace
}  // namespace epctx::exec::testing
