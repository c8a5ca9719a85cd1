// String tensors in the kernels that take them: Cast to and from string (numpy's text of floats,
// the reserved literals, integer and bool text, the message for text that is not a number), and
// the data-movement ops (Equal, Gather, Concat, Transpose, Slice, Expand, Tile, Where) on strings
// that live on the heap (a byte copy of std::string objects would not pass).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

Tensor FirstOutput(const NodeSpec& spec, const AttrBuilder& attrs,
                   const std::vector<const Tensor*>& inputs) {
  auto r = RunNode(spec, attrs, inputs);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok() || r->empty()) return Tensor();
  return (*r)[0];
}

Tensor CastTo(DataType to, const Tensor& x) {
  AttrBuilder a;
  a.Int("to", static_cast<int64_t>(to));
  return FirstOutput(NodeSpec("Cast", 13), a, {&x});
}

TEST(CastString, FloatsPrintAsNumpyPrintsTheirScalars) {
  const float inf = std::numeric_limits<float>::infinity();
  // 0.296140194f is from test_cast_FLOAT_to_STRING, whose data has "0.2961402" (%.8g would
  // give "0.29614019"); the others are numpy's str() of the same float32 values.
  Tensor x = FloatTensor({13}, {0.296140194f, 1.0f, 100000.0f, 123456789.0f, 1e-4f, 1e-5f, 1e16f,
                                -0.0f, 3.4e38f, 0.5f, std::nanf(""), inf, -inf});
  Tensor y = CastTo(DataType::kString, x);
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{13}));
  EXPECT_EQ(StringsOf(y), (std::vector<std::string>{"0.2961402", "1.0", "100000.0", "123456790.0",
                                                    "1e-04", "1e-05", "1e+16", "-0.0", "3.4e+38",
                                                    "0.5", "NaN", "INF", "-INF"}));

  const std::vector<double> d = {0.1, 1.0 / 3, 1e-4, 123456789.0};
  Tensor xd = MakeTensor(DataType::kFloat64, {4}, d.data());
  EXPECT_EQ(StringsOf(CastTo(DataType::kString, xd)),
            (std::vector<std::string>{"0.1", "0.3333333333333333", "0.0001", "123456789.0"}));

  // float16 takes the fewest digits that read back as the same float16 (numpy: '0.1', '65500.0').
  Tensor xh = CastTo(DataType::kFloat16, FloatTensor({2}, {0.1f, 65504.0f}));
  EXPECT_EQ(StringsOf(CastTo(DataType::kString, xh)), (std::vector<std::string>{"0.1", "65500.0"}));
}

TEST(CastString, FloatTextReadsBackAsTheSameFloat) {
  std::mt19937 rng(7);
  Tensor x = RandomFloats({64}, rng, -1e6f, 1e6f);
  float* p = x.mutable_data_as<float>();
  p[0] = 1.17549435e-38f;  // smallest normal
  p[1] = 1e-45f;           // a denormal
  p[2] = std::numeric_limits<float>::max();
  Tensor back = CastTo(DataType::kFloat32, CastTo(DataType::kString, x));
  EXPECT_EQ(FloatsOf(back), FloatsOf(x));
}

TEST(CastString, TextReadsAsNumbers) {
  Tensor text = StringTensor(
      {9}, {"0.47892547", " 1.5 ", "NaN", "INF", "+INF", "-inf", "1E8", "1e400", "-2"});
  const std::vector<float> f = FloatsOf(CastTo(DataType::kFloat32, text));
  EXPECT_EQ(f[0], 0.47892547f);
  EXPECT_EQ(f[1], 1.5f);
  EXPECT_TRUE(std::isnan(f[2]));
  EXPECT_EQ(f[3], std::numeric_limits<float>::infinity());
  EXPECT_EQ(f[4], std::numeric_limits<float>::infinity());
  EXPECT_EQ(f[5], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(f[6], 1e8f);
  EXPECT_EQ(f[7], std::numeric_limits<float>::infinity());
  EXPECT_EQ(f[8], -2.0f);

  Tensor ints = StringTensor({5}, {"42", "-7", "100.5", "+3", "200"});
  EXPECT_EQ(Int64sOf(CastTo(DataType::kInt64, ints)), (std::vector<int64_t>{42, -7, 100, 3, 200}));
  // Integers wrap into narrower types as the integer casts do: 200 -> -56.
  EXPECT_EQ(ValuesOf<int8_t>(CastTo(DataType::kInt8, ints)),
            (std::vector<int8_t>{42, -7, 100, 3, -56}));
  Tensor big = StringTensor({1}, {"18446744073709551615"});
  EXPECT_EQ(ValuesOf<uint64_t>(CastTo(DataType::kUint64, big)),
            (std::vector<uint64_t>{18446744073709551615u}));

  Tensor bools = StringTensor({4}, {"0", "1", "True", "false"});
  EXPECT_EQ(ValuesOf<bool>(CastTo(DataType::kBool, bools)),
            (std::vector<bool>{false, true, true, false}));
}

TEST(CastString, IntegersAndBoolsPrintAsDecimals) {
  const std::vector<int8_t> i8 = {-5, 7};
  EXPECT_EQ(StringsOf(CastTo(DataType::kString, MakeTensor(DataType::kInt8, {2}, i8.data()))),
            (std::vector<std::string>{"-5", "7"}));
  const std::vector<uint64_t> u64 = {18446744073709551615u};
  EXPECT_EQ(StringsOf(CastTo(DataType::kString, MakeTensor(DataType::kUint64, {1}, u64.data()))),
            (std::vector<std::string>{"18446744073709551615"}));
  const bool b[] = {true, false};
  EXPECT_EQ(StringsOf(CastTo(DataType::kString, MakeTensor(DataType::kBool, {2}, b))),
            (std::vector<std::string>{"1", "0"}));
  // String to string is a copy; CastLike takes the type of its second input.
  Tensor s = StringTensor({2}, {"a", "b"});
  EXPECT_EQ(StringsOf(CastTo(DataType::kString, s)), (std::vector<std::string>{"a", "b"}));
  Tensor like = StringTensor({1}, {""});
  Tensor x = Int64Tensor({2}, {3, -4});
  EXPECT_EQ(StringsOf(FirstOutput(NodeSpec("CastLike", 15), {}, {&x, &like})),
            (std::vector<std::string>{"3", "-4"}));
}

TEST(CastString, TextThatIsNotANumberIsAnErrorNamingIt) {
  Tensor text = StringTensor({3}, {"1", "Hello World!", "2"});
  AttrBuilder a;
  a.Int("to", static_cast<int64_t>(DataType::kFloat32));
  ExpectError(RunNode(NodeSpec("Cast", 13), a, {&text}).status(), StatusCode::kInvalidArgument,
              "element 1 ('Hello World!') of the input cannot be read as float32");
  Tensor half = StringTensor({2}, {"1.5x", "--1"});
  AttrBuilder i;
  i.Int("to", static_cast<int64_t>(DataType::kInt32));
  ExpectError(RunNode(NodeSpec("Cast", 13), i, {&half}).status(), StatusCode::kInvalidArgument,
              "element 0 ('1.5x') of the input cannot be read as int32");
  Tensor empty = StringTensor({1}, {""});
  ExpectError(RunNode(NodeSpec("Cast", 13), a, {&empty}).status(), StatusCode::kInvalidArgument,
              "element 0 ('') of the input");
}

// Strings long enough to live on the heap, so that a byte copy of std::string objects would not
// pass by accident.
std::string Word(int i) {
  return "word number " + std::to_string(i) + " of a string tensor";
}

std::vector<std::string> Words(std::vector<int> ids) {
  std::vector<std::string> out;
  for (int i : ids) out.push_back(Word(i));
  return out;
}

TEST(StringDataMovement, EqualComparesStringsWithBroadcasting) {
  Tensor a = StringTensor({2, 2}, {"a", "b", "c", ""});
  Tensor b = StringTensor({2}, {"a", ""});
  Tensor y = FirstOutput(NodeSpec("Equal", 19), {}, {&a, &b});
  ASSERT_EQ(y.dtype(), DataType::kBool);
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(ValuesOf<bool>(y), (std::vector<bool>{true, false, false, true}));
  Tensor n = Int64Tensor({1}, {1});
  ExpectError(RunNode(NodeSpec("Equal", 19), {}, {&a, &n}).status(), StatusCode::kUnsupported,
              "input B has type int64, expected string");
}

TEST(StringDataMovement, GatherPicksStringsAlongAnAxis) {
  Tensor data = StringTensor({2, 3}, Words({0, 1, 2, 3, 4, 5}));
  Tensor index = Int64Tensor({2}, {2, -3});
  AttrBuilder a;
  a.Int("axis", 1);
  Tensor y = FirstOutput(NodeSpec("Gather", 13), a, {&data, &index});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(StringsOf(y), Words({2, 0, 5, 3}));
}

TEST(StringDataMovement, ConcatJoinsStringTensors) {
  Tensor a = StringTensor({2, 1}, Words({0, 1}));
  Tensor b = StringTensor({2, 2}, Words({2, 3, 4, 5}));
  AttrBuilder at;
  at.Int("axis", 1);
  Tensor y = FirstOutput(NodeSpec("Concat", 13), at, {&a, &b});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(StringsOf(y), Words({0, 2, 3, 1, 4, 5}));
  Tensor n = FloatTensor({2, 1}, {1, 2});
  ExpectError(RunNode(NodeSpec("Concat", 13), at, {&a, &n}).status(), StatusCode::kInvalidArgument,
              "input 1 has type float32, input 0 has string");
}

TEST(StringDataMovement, TransposePermutesStrings) {
  Tensor x = StringTensor({2, 3}, Words({0, 1, 2, 3, 4, 5}));
  Tensor y = FirstOutput(NodeSpec("Transpose", 13), {}, {&x});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(StringsOf(y), Words({0, 3, 1, 4, 2, 5}));
}

TEST(StringDataMovement, SliceWalksStringsWithSteps) {
  Tensor x = StringTensor({2, 4}, Words({0, 1, 2, 3, 4, 5, 6, 7}));
  Tensor starts = Int64Tensor({1}, {-1});
  Tensor ends = Int64Tensor({1}, {0});
  Tensor axes = Int64Tensor({1}, {1});
  Tensor steps = Int64Tensor({1}, {-2});
  Tensor y = FirstOutput(NodeSpec("Slice", 13), {}, {&x, &starts, &ends, &axes, &steps});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(StringsOf(y), Words({3, 1, 7, 5}));
}

TEST(StringDataMovement, ExpandRepeatsStrings) {
  Tensor x = StringTensor({2, 1}, Words({0, 1}));
  Tensor shape = Int64Tensor({2}, {2, 3});
  Tensor y = FirstOutput(NodeSpec("Expand", 13), {}, {&x, &shape});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(StringsOf(y), Words({0, 0, 0, 1, 1, 1}));
}

TEST(StringDataMovement, TileRepeatsStringTensors) {
  Tensor x = StringTensor({1, 2}, Words({0, 1}));
  Tensor repeats = Int64Tensor({2}, {2, 2});
  Tensor y = FirstOutput(NodeSpec("Tile", 13), {}, {&x, &repeats});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(StringsOf(y), Words({0, 1, 0, 1, 0, 1, 0, 1}));
}

TEST(StringDataMovement, WhereChoosesStrings) {
  const bool cond[] = {true, false, false, true};
  Tensor c = MakeTensor(DataType::kBool, {2, 2}, cond);
  Tensor x = StringTensor({2, 2}, Words({0, 1, 2, 3}));
  Tensor y = StringTensor({1}, {"other"});
  Tensor out = FirstOutput(NodeSpec("Where", 16), {}, {&c, &x, &y});
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(StringsOf(out), (std::vector<std::string>{Word(0), "other", "other", Word(3)}));
}

TEST(StringDataMovement, KernelsWithoutAStringPathAreStillRefused) {
  Tensor x = StringTensor({2}, {"a", "b"});
  ExpectError(RunNode(NodeSpec("Neg", 13), {}, {&x}).status(), StatusCode::kUnsupported, "string");
}

}  // namespace
}  // namespace epctx::exec::testing
