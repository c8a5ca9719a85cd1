// The math family: a unary map, broadcasting comparison, Mod's sign rules, Pow with mixed types,
// Where, Cast through float16, and the unsupported-type error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

TEST(MathKernels, NegAbsOnInt64) {
  AttrBuilder none;
  Tensor x = Int64Tensor({3}, {-2, 0, 5});
  auto neg = RunNode(NodeSpec("Neg", 13), none, {&x});
  ASSERT_TRUE(neg.ok()) << neg.status().message();
  EXPECT_EQ(Int64sOf((*neg)[0]), (std::vector<int64_t>{2, 0, -5}));
  auto abs = RunNode(NodeSpec("Abs", 13), none, {&x});
  ASSERT_TRUE(abs.ok()) << abs.status().message();
  EXPECT_EQ(Int64sOf((*abs)[0]), (std::vector<int64_t>{2, 0, 5}));
}

TEST(MathKernels, LessBroadcastsToBool) {
  AttrBuilder none;
  Tensor a = FloatTensor({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = FloatTensor({3}, {2, 2, 5});
  auto out = RunNode(NodeSpec("Less", 13), none, {&a, &b});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const Tensor& y = (*out)[0];
  ASSERT_EQ(y.dtype(), DataType::kBool);
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, 3}));
  const bool* p = y.data_as<bool>();
  EXPECT_EQ(std::vector<bool>(p, p + 6),
            (std::vector<bool>{true, false, true, false, false, false}));
}

TEST(MathKernels, ModSignRules) {
  Tensor a = Int64Tensor({4}, {-7, 7, -7, 7});
  Tensor b = Int64Tensor({4}, {3, -3, -3, 3});
  AttrBuilder python;
  auto r = RunNode(NodeSpec("Mod", 13), python, {&a, &b});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Int64sOf((*r)[0]), (std::vector<int64_t>{2, -2, -1, 1}));
  AttrBuilder c;
  c.Int("fmod", 1);
  auto f = RunNode(NodeSpec("Mod", 13), c, {&a, &b});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(Int64sOf((*f)[0]), (std::vector<int64_t>{-1, 1, -1, 1}));
}

TEST(MathKernels, PowFloatBaseInt64Exponent) {
  AttrBuilder none;
  Tensor x = FloatTensor({3}, {2, 3, 0.5f});
  Tensor e = Int64Tensor({1}, {2});
  auto out = RunNode(NodeSpec("Pow", 15), none, {&x, &e});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(FloatsOf((*out)[0]), (std::vector<float>{4, 9, 0.25f}));
}

// The base takes the types of Pow's constraint T (float types, int32, int64); the exponent any
// numeric type.
TEST(MathKernels, PowBaseOutsideItsTypeConstraintIsRefused) {
  AttrBuilder none;
  const uint8_t small[2] = {2, 3};
  Tensor u8 = MakeTensor(DataType::kUint8, {2}, small);
  const int32_t wide[2] = {2, 3};
  Tensor i32 = MakeTensor(DataType::kInt32, {2}, wide);
  for (bool describe : {true, false}) {  // found at creation, or at run time
    NodeSpec spec("Pow", 15);
    spec.describe_inputs = describe;
    // At creation the registry refuses it for the types the row declares; at run the kernel.
    ExpectError(RunNode(spec, none, {&u8, &i32}).status(), StatusCode::kUnsupported,
                describe ? "input 0 has type uint8, which Pow does not run on (it takes float32, "
                           "float64, float16, bfloat16, int32, int64)"
                         : "type uint8 is not supported");
  }
  auto out = RunNode(NodeSpec("Pow", 15), none, {&i32, &u8});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const Tensor& y = (*out)[0];
  ASSERT_EQ(y.dtype(), DataType::kInt32);
  EXPECT_EQ(std::vector<int32_t>(y.data_as<int32_t>(), y.data_as<int32_t>() + 2),
            (std::vector<int32_t>{4, 27}));
}

TEST(MathKernels, WhereBroadcastsThreeInputs) {
  AttrBuilder none;
  const bool cond[2] = {true, false};
  Tensor c = MakeTensor(DataType::kBool, {2, 1}, cond);
  Tensor x = FloatTensor({3}, {1, 2, 3});
  Tensor y = FloatTensor({1}, {-1});
  auto out = RunNode(NodeSpec("Where", 16), none, {&c, &x, &y});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(FloatsOf((*out)[0]), (std::vector<float>{1, 2, 3, -1, -1, -1}));
}

TEST(MathKernels, CastRoundTripsThroughFloat16) {
  AttrBuilder to_half;
  to_half.Int("to", static_cast<int64_t>(DataType::kFloat16));
  Tensor x = FloatTensor({4}, {1.0f, -2.5f, 65504.0f, 1e-7f});
  auto half = RunNode(NodeSpec("Cast", 13), to_half, {&x});
  ASSERT_TRUE(half.ok()) << half.status().message();
  ASSERT_EQ((*half)[0].dtype(), DataType::kFloat16);
  AttrBuilder to_float;
  to_float.Int("to", static_cast<int64_t>(DataType::kFloat32));
  auto back = RunNode(NodeSpec("Cast", 13), to_float, {&(*half)[0]});
  ASSERT_TRUE(back.ok()) << back.status().message();
  const std::vector<float> got = FloatsOf((*back)[0]);
  EXPECT_EQ(got[0], 1.0f);
  EXPECT_EQ(got[1], -2.5f);
  EXPECT_EQ(got[2], 65504.0f);
  EXPECT_NEAR(got[3], 1.19209e-7f, 1e-9f);  // nearest float16 subnormal
}

// NaN and values outside the integer type's range (undefined in C++, unsaid in ONNX) saturate,
// NaN to 0; values in range truncate toward zero.
TEST(MathKernels, CastOfFloatToIntegerSaturatesAndTakesNaNToZero) {
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x = FloatTensor({8}, {std::nanf(""), inf, -inf, 1e30f, -1e30f, 2.9f, -2.9f, 9.3e18f});
  AttrBuilder to_int64;
  to_int64.Int("to", static_cast<int64_t>(DataType::kInt64));
  auto wide = RunNode(NodeSpec("Cast", 13), to_int64, {&x});
  ASSERT_TRUE(wide.ok()) << wide.status().message();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(Int64sOf((*wide)[0]), (std::vector<int64_t>{0, kMax, kMin, kMax, kMin, 2, -2, kMax}));

  AttrBuilder to_uint8;
  to_uint8.Int("to", static_cast<int64_t>(DataType::kUint8));
  auto narrow = RunNode(NodeSpec("Cast", 13), to_uint8, {&x});
  ASSERT_TRUE(narrow.ok()) << narrow.status().message();
  const uint8_t* got = (*narrow)[0].data_as<uint8_t>();
  EXPECT_EQ(std::vector<int>(got, got + 8), (std::vector<int>{0, 255, 0, 255, 0, 2, 0, 255}));
}

TEST(MathKernels, SqrtOfInt64IsUnsupported) {
  AttrBuilder none;
  Tensor x = Int64Tensor({1}, {4});
  ExpectError(RunNode(NodeSpec("Sqrt", 13), none, {&x}).status(), StatusCode::kUnsupported,
              "input 0 has type int64, which Sqrt does not run on (it takes float types)");
}

}  // namespace
}  // namespace epctx::exec::testing
