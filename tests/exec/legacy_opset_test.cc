// Registrations for opsets before 7, as the PyTorch-exported models use them: Add/Sub/Mul/Div and
// Pow with the legacy broadcast/axis attributes, Gemm's broadcast attribute, PRelu's per-channel
// slope and BatchNormalization's is_test, against hand-computed references.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

std::vector<double> Doubles(const Tensor& t) {
  std::vector<double> out;
  for (float v : FloatsOf(t)) out.push_back(v);
  return out;
}

TEST(LegacyBroadcastTest, AxisPlacesBInsideA) {
  // A [2,3,4], B [3] at axis 1: B[j] is added to every A[i,j,k].
  std::vector<float> av(24);
  for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(i);
  Tensor a = FloatTensor({2, 3, 4}, av);
  Tensor b = FloatTensor({3}, {100, 200, 300});
  AttrBuilder attrs;
  attrs.Int("broadcast", 1).Int("axis", 1);
  for (int64_t opset : {1, 6}) {
    auto r = RunNode(NodeSpec("Add", opset), attrs, {&a, &b});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<double> ref;
    for (int64_t i = 0; i < 24; ++i)
      ref.push_back(static_cast<double>(i) + 100.0 * (i / 4 % 3 + 1));
    ExpectClose((*r)[0], {2, 3, 4}, ref, 0, 0, "Add axis=1");
  }
}

TEST(LegacyBroadcastTest, SuffixMatchingAndSizeOneDims) {
  Tensor a = FloatTensor({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor row = FloatTensor({3}, {1, 2, 4});
  Tensor column = FloatTensor({2, 1}, {10, 20});
  Tensor single = FloatTensor({1, 1}, {2});
  AttrBuilder right;  // no axis: B lines up with A's last dims
  right.Int("broadcast", 1);
  auto sub = RunNode(NodeSpec("Sub", 6), right, {&a, &row});
  ASSERT_TRUE(sub.ok()) << sub.status().ToString();
  ExpectClose((*sub)[0], {2, 3}, {0, 0, -1, 3, 3, 2}, 0, 0, "Sub suffix");
  auto div = RunNode(NodeSpec("Div", 6), right, {&a, &single});
  ASSERT_TRUE(div.ok()) << div.status().ToString();
  ExpectClose((*div)[0], {2, 3}, {0.5, 1, 1.5, 2, 2.5, 3}, 0, 0, "Div one element");
  // [2,1] at axis 0 (as PyTorch's exporter writes it): a size-1 dim broadcasts too.
  AttrBuilder axis0;
  axis0.Int("broadcast", 1).Int("axis", 0);
  auto mul = RunNode(NodeSpec("Mul", 6), axis0, {&a, &column});
  ASSERT_TRUE(mul.ok()) << mul.status().ToString();
  ExpectClose((*mul)[0], {2, 3}, {10, 20, 30, 80, 100, 120}, 0, 0, "Mul axis=0");
  // Without broadcast the shapes are equal, and integer types work as from opset 7.
  Tensor ia = Int64Tensor({2}, {7, -3});
  Tensor ib = Int64Tensor({2}, {2, 5});
  AttrBuilder none;
  auto isum = RunNode(NodeSpec("Add", 6), none, {&ia, &ib});
  ASSERT_TRUE(isum.ok()) << isum.status().ToString();
  EXPECT_EQ(Int64sOf((*isum)[0]), (std::vector<int64_t>{9, 2}));
}

TEST(LegacyBroadcastTest, PowOpset1) {
  Tensor x = FloatTensor({2, 2}, {1, 2, 3, 4});
  Tensor e = FloatTensor({2}, {2, 3});
  AttrBuilder axis0;
  axis0.Int("broadcast", 1).Int("axis", 0);
  auto r = RunNode(NodeSpec("Pow", 1), axis0, {&x, &e});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {2, 2}, {1, 4, 27, 64}, 1e-6, 1e-6, "Pow axis=0");
  AttrBuilder suffix;
  suffix.Int("broadcast", 1);
  auto s = RunNode(NodeSpec("Pow", 1), suffix, {&x, &e});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ExpectClose((*s)[0], {2, 2}, {1, 8, 9, 64}, 1e-6, 1e-6, "Pow suffix");
}

TEST(LegacyBroadcastTest, Errors) {
  Tensor a = FloatTensor({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = FloatTensor({3}, {1, 2, 3});
  AttrBuilder axis_only;
  axis_only.Int("axis", 1);
  ExpectError(RunNode(NodeSpec("Add", 6), axis_only, {&a, &b}).status(),
              StatusCode::kInvalidArgument, "attribute axis is set but broadcast is 0");
  AttrBuilder bad_flag;
  bad_flag.Int("broadcast", 2);
  ExpectError(RunNode(NodeSpec("Mul", 6), bad_flag, {&a, &b}).status(),
              StatusCode::kInvalidArgument, "attribute broadcast is 2, expected 0 or 1");
  for (bool describe : {true, false}) {  // found at creation, or at run time
    NodeSpec spec("Sub", 6);
    spec.describe_inputs = describe;
    AttrBuilder none;
    ExpectError(RunNode(spec, none, {&a, &b}).status(), StatusCode::kInvalidArgument,
                "shapes [2,3] and [3] differ and broadcast is 0");
    AttrBuilder axis0;
    axis0.Int("broadcast", 1).Int("axis", 0);
    ExpectError(RunNode(spec, axis0, {&a, &b}).status(), StatusCode::kInvalidArgument,
                "dim 0 of B is 3, dim 0 of A is 2");
    AttrBuilder axis1;
    axis1.Int("broadcast", 1).Int("axis", 1);
    Tensor b2 = FloatTensor({3, 1}, {1, 2, 3});
    ExpectError(RunNode(spec, axis1, {&a, &b2}).status(), StatusCode::kInvalidArgument,
                "B of shape [3,1] does not fit A of shape [2,3] starting at axis 1");
  }
  // Opset 7 takes numpy broadcasting and ignores nothing: B [3] against A [2,3] is fine there.
  AttrBuilder none;
  EXPECT_TRUE(RunNode(NodeSpec("Sub", 7), none, {&a, &b}).ok());
}

TEST(LegacyGemmTest, BroadcastAttributeGovernsC) {
  Tensor a = FloatTensor({2, 2}, {1, 2, 3, 4});
  Tensor b = FloatTensor({2, 2}, {1, 0, 0, 1});
  Tensor c = FloatTensor({2}, {10, 20});
  AttrBuilder bcast;
  bcast.Int("broadcast", 1);
  auto r = RunNode(NodeSpec("Gemm", 6), bcast, {&a, &b, &c});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {2, 2}, {11, 22, 13, 24}, 1e-6, 0, "Gemm-6 broadcast=1");
  AttrBuilder none;
  ExpectError(RunNode(NodeSpec("Gemm", 6), none, {&a, &b, &c}).status(),
              StatusCode::kInvalidArgument,
              "input C has shape [2], expected [2,2] since broadcast");
  Tensor full = FloatTensor({2, 2}, {1, 1, 1, 1});
  auto f = RunNode(NodeSpec("Gemm", 6), none, {&a, &b, &full});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ExpectClose((*f)[0], {2, 2}, {2, 3, 4, 5}, 1e-6, 0, "Gemm-6 broadcast=0");
}

TEST(LegacyPReluTest, SlopePerChannelOrShared) {
  // X [2,3,2]: the slope [3] applies along dim 1, not (numpy-style) along the last dim.
  const std::vector<float> xv{-1, 2, -3, 4, -5, 6, 1, -2, 3, -4, 5, -6};
  Tensor x = FloatTensor({2, 3, 2}, xv);
  Tensor slopes = FloatTensor({3}, {0.5f, 0.25f, 2});
  Tensor shared = FloatTensor({1}, {0.1f});
  AttrBuilder none;
  for (int64_t opset : {1, 6}) {
    auto r = RunNode(NodeSpec("PRelu", opset), none, {&x, &slopes});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ExpectClose((*r)[0], {2, 3, 2}, {-0.5, 2, -0.75, 4, -10, 6, 1, -1, 3, -1, 5, -12}, 1e-6, 0,
                "PRelu per channel");
  }
  auto s = RunNode(NodeSpec("PRelu", 6), none, {&x, &shared});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::vector<double> ref;
  for (float v : xv) ref.push_back(v < 0 ? v * double{0.1f} : v);
  ExpectClose((*s)[0], {2, 3, 2}, ref, 1e-6, 1e-6, "PRelu shared");
  Tensor wrong = FloatTensor({4}, {1, 2, 3, 4});
  ExpectError(RunNode(NodeSpec("PRelu", 6), none, {&x, &wrong}).status(),
              StatusCode::kInvalidArgument, "slope of shape [4] is neither a single value");
}

TEST(LegacyBatchNormTest, IsTestSelectsInference) {
  std::mt19937 rng(61);
  Tensor x = RandomFloats({2, 3, 2, 2}, rng);
  Tensor scale = FloatTensor({3}, {1, 2, 0.5f});
  Tensor bias = FloatTensor({3}, {0, 1, -1});
  Tensor mean = FloatTensor({3}, {0.5f, 0, -0.5f});
  Tensor var = FloatTensor({3}, {1, 4, 0.25f});
  AttrBuilder test;
  test.Int("is_test", 1).Float("epsilon", 0.0f).Float("momentum", 0.9f).Int("spatial", 1);
  auto r = RunNode(NodeSpec("BatchNormalization", 6), test, {&x, &scale, &bias, &mean, &var});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::vector<double> xv = Doubles(x);
  const double mul[3] = {1, 1, 1};        // scale / sqrt(var)
  const double add[3] = {-0.5, 1, -0.5};  // B - mean * scale / sqrt(var)
  std::vector<double> ref;
  for (size_t i = 0; i < xv.size(); ++i) ref.push_back(xv[i] * mul[i / 4 % 3] + add[i / 4 % 3]);
  ExpectClose((*r)[0], {2, 3, 2, 2}, ref, 1e-6, 1e-6, "BatchNormalization-6");
  AttrBuilder training;  // is_test defaults to 0
  ExpectError(RunNode(NodeSpec("BatchNormalization", 6), training, {&x, &scale, &bias, &mean, &var})
                  .status(),
              StatusCode::kUnsupported, "is_test=0 (training) is not supported");
}

}  // namespace
}  // namespace epctx::exec::testing
