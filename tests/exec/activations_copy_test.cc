// Relu, Sigmoid, Clip (attribute and input bounds), Identity and Dropout (inference; training with
// ratio 0; training with a seed: the draws of MT19937 worked out independently of the kernel).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

std::vector<double> Map(const Tensor& x, double (*f)(double)) {
  std::vector<double> out;
  for (float v : FloatsOf(x)) out.push_back(f(v));
  return out;
}

TEST(ActivationsTest, ReluAndSigmoidSmallAndLarge) {
  std::mt19937 rng(31);
  AttrBuilder none;
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{7}, std::vector<int64_t>{2, 3, 5},
                                            std::vector<int64_t>{4, 128, 129}}) {
    Tensor x = RandomFloats(shape, rng, -6, 6);
    for (int threads : {1, 2}) {
      NodeSpec relu("Relu", 14);
      relu.threads = threads;
      auto r = RunNode(relu, none, {&x});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ExpectClose((*r)[0], shape, Map(x, [](double v) { return v > 0 ? v : 0.0; }), 0, 0, "Relu");
      NodeSpec sigmoid("Sigmoid", 13);
      sigmoid.threads = threads;
      auto s = RunNode(sigmoid, none, {&x});
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      ExpectClose((*s)[0], shape, Map(x, [](double v) { return 1 / (1 + std::exp(-v)); }), 1e-6,
                  1e-5, "Sigmoid");
    }
  }
}

TEST(ActivationsTest, RejectsOtherTypes) {
  Tensor i = Int64Tensor({2}, {1, -1});
  AttrBuilder none;
  ExpectError(RunNode(NodeSpec("Relu", 14), none, {&i}).status(), StatusCode::kUnsupported,
              "input 0 has type int64, which Relu does not run on (it takes float32)");
}

TEST(ClipTest, AttributeBoundsBeforeOpset11) {
  std::mt19937 rng(32);
  Tensor x = RandomFloats({3, 50}, rng, -3, 3);
  AttrBuilder attrs;
  attrs.Float("min", -1.0f).Float("max", 0.5f);
  auto r = RunNode(NodeSpec("Clip", 6), attrs, {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectClose((*r)[0], {3, 50}, Map(x, [](double v) { return std::clamp(v, -1.0, 0.5); }), 0, 0,
              "Clip-6");
  AttrBuilder only_max;
  only_max.Float("max", 0.0f);
  auto m = RunNode(NodeSpec("Clip", 6), only_max, {&x});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ExpectClose((*m)[0], {3, 50}, Map(x, [](double v) { return std::min(v, 0.0); }), 0, 0,
              "Clip-6 max only");
}

TEST(ClipTest, InputBoundsFromOpset11) {
  std::mt19937 rng(33);
  Tensor x = RandomFloats({100}, rng, -3, 3);
  Tensor lo = FloatTensor({}, {-0.25f});
  Tensor hi = FloatTensor({}, {2.0f});
  AttrBuilder none;
  auto both = RunNode(NodeSpec("Clip", 13), none, {&x, &lo, &hi});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  ExpectClose((*both)[0], {100}, Map(x, [](double v) { return std::clamp(v, -0.25, 2.0); }), 0, 0,
              "Clip-13");
  auto max_only = RunNode(NodeSpec("Clip", 13), none, {&x, nullptr, &hi});
  ASSERT_TRUE(max_only.ok()) << max_only.status().ToString();
  ExpectClose((*max_only)[0], {100}, Map(x, [](double v) { return std::min(v, 2.0); }), 0, 0,
              "Clip-13 max only");
  Tensor ints = Int64Tensor({4}, {-5, 0, 5, 10});
  Tensor ilo = Int64Tensor({}, {-1});
  Tensor ihi = Int64Tensor({}, {6});
  auto r = RunNode(NodeSpec("Clip", 13), none, {&ints, &ilo, &ihi});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Int64sOf((*r)[0]), (std::vector<int64_t>{-1, 0, 5, 6}));
  Tensor wide = FloatTensor({2}, {0, 1});
  ExpectError(RunNode(NodeSpec("Clip", 13), none, {&x, &wide}).status(),
              StatusCode::kInvalidArgument, "input min has shape [2], expected a scalar");
}

TEST(IdentityDropoutTest, CopiesAndMasks) {
  std::mt19937 rng(34);
  Tensor x = RandomFloats({2, 9}, rng);
  AttrBuilder none;
  auto id = RunNode(NodeSpec("Identity", 16), none, {&x});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  std::vector<double> ref;
  for (float v : FloatsOf(x)) ref.push_back(v);
  ExpectClose((*id)[0], {2, 9}, ref, 0, 0, "Identity");
  EXPECT_NE((*id)[0].data(), x.data());

  NodeSpec dropout("Dropout", 13);
  dropout.outputs = 2;
  Tensor ratio = FloatTensor({}, {0.5f});
  const uint8_t off = 0;
  Tensor training = MakeTensor(DataType::kBool, {}, &off);
  auto d = RunNode(dropout, none, {&x, &ratio, &training});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ExpectClose((*d)[0], {2, 9}, ref, 0, 0, "Dropout output");
  const Tensor& mask = (*d)[1];
  ASSERT_EQ(mask.dtype(), DataType::kBool);
  ASSERT_EQ(mask.shape(), (std::vector<int64_t>{2, 9}));
  for (int64_t i = 0; i < mask.element_count(); ++i) EXPECT_EQ(mask.data_as<uint8_t>()[i], 1);

  NodeSpec dropout7("Dropout", 7);
  dropout7.outputs = 2;
  auto d7 = RunNode(dropout7, none, {&x});
  ASSERT_TRUE(d7.ok()) << d7.status().ToString();
  ExpectClose((*d7)[1], {2, 9}, std::vector<double>(18, 1.0), 0, 0, "Dropout-7 mask");
}

TEST(DropoutTest, TrainingWithZeroRatioIsIdentity) {
  const std::vector<float> xv{1, -2, 3, -4, 5, -6};
  Tensor x = FloatTensor({2, 3}, xv);
  Tensor zero = FloatTensor({}, {0.0f});
  Tensor half = FloatTensor({}, {0.5f});
  const uint8_t on = 1;
  Tensor training = MakeTensor(DataType::kBool, {}, &on);
  AttrBuilder seed;
  seed.Int("seed", 0);
  for (bool describe : {true, false}) {
    NodeSpec spec("Dropout", 13);
    spec.outputs = 2;
    spec.describe_inputs = describe;
    auto r = RunNode(spec, seed, {&x, &zero, &training});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ExpectClose((*r)[0], {2, 3}, {1, -2, 3, -4, 5, -6}, 0, 0, "Dropout ratio 0");
    ASSERT_EQ((*r)[1].dtype(), DataType::kBool);
    ASSERT_EQ((*r)[1].element_count(), 6);
    for (int64_t i = 0; i < 6; ++i) EXPECT_EQ((*r)[1].data_as<uint8_t>()[i], 1);
  }
}

// Element i is kept when draw i >= ratio, draws being genrand_res53 doubles of MT19937(seed):
// computed here with std::mt19937 directly, and against the first draws of seed 0 as published
// for the reference generator (0.5488135..., 0.7151893..., 0.6027633...).
TEST(DropoutTest, TrainingWithSeedDropsByMt19937Draws) {
  std::mt19937 mt(5);
  std::vector<double> draws;
  for (int i = 0; i < 6; ++i) {
    const uint32_t a = static_cast<uint32_t>(mt()) >> 5;
    const uint32_t b = static_cast<uint32_t>(mt()) >> 6;
    draws.push_back((a * 67108864.0 + b) / 9007199254740992.0);
  }
  const std::vector<float> xv{1, -2, 3, -4, 5, -6};
  Tensor x = FloatTensor({2, 3}, xv);
  Tensor ratio = FloatTensor({}, {0.5f});
  const uint8_t on = 1;
  Tensor training = MakeTensor(DataType::kBool, {}, &on);
  AttrBuilder seed;
  seed.Int("seed", 5);
  NodeSpec spec("Dropout", 13);
  spec.outputs = 2;
  auto r = RunNode(spec, seed, {&x, &ratio, &training});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<double> ref;
  int kept = 0;
  for (size_t i = 0; i < xv.size(); ++i) {
    const bool keep = draws[i] >= 0.5;
    kept += keep;
    ref.push_back(keep ? xv[i] * 2.0 : 0.0);
    EXPECT_EQ((*r)[1].data_as<uint8_t>()[i], keep ? 1 : 0) << i;
  }
  ASSERT_GT(kept, 0);
  ASSERT_LT(kept, 6);  // the seed drops some and keeps some, so the test can tell them apart
  ExpectClose((*r)[0], {2, 3}, ref, 0, 0, "Dropout seed 5");
  // Seeded: every run draws the same.
  auto again = RunNode(spec, seed, {&x, &ratio, &training});
  ASSERT_TRUE(again.ok());
  ExpectClose((*again)[0], {2, 3}, ref, 0, 0, "Dropout seed 5, second run");

  // Seed 0: the first draws of the reference MT19937.
  std::mt19937 mt0(0);
  const uint32_t a = static_cast<uint32_t>(mt0()) >> 5, b = static_cast<uint32_t>(mt0()) >> 6;
  EXPECT_NEAR((a * 67108864.0 + b) / 9007199254740992.0, 0.5488135039273248, 1e-15);

  Tensor one = FloatTensor({}, {1.0f});
  ExpectError(RunNode(spec, seed, {&x, &one, &training}).status(), StatusCode::kInvalidArgument,
              "ratio 1 is outside [0, 1)");
}

}  // namespace
}  // namespace epctx::exec::testing
