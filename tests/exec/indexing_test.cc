// Indexing kernels (Slice, Expand, Tile, Pad, Split, Range, ConstantOfShape, Gather*/Scatter*,
// NonZero, OneHot, Trilu, Compress, EyeLike, ReverseSequence): exact results worked out by
// hand, the ONNX clamping and negative-index rules, types other than float, and error messages.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Tensor CountFromZero(const std::vector<int64_t>& shape) {
  std::vector<float> v(static_cast<size_t>(Count(shape)));
  std::iota(v.begin(), v.end(), 0.0f);
  return FloatTensor(shape, v);
}

TEST(SliceTest, StepsClampingAndNegativeSteps) {
  Tensor x = CountFromZero({3, 4});
  AttrBuilder none;
  Tensor starts = Int64Tensor({2}, {0, 1});
  Tensor ends = Int64Tensor({2}, {kMax, 1000});
  Tensor axes = Int64Tensor({2}, {0, -1});
  Tensor steps = Int64Tensor({2}, {2, 2});
  auto r = RunOne(NodeSpec("Slice", 13), none, {&x, &starts, &ends, &axes, &steps});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(FloatsOf(*r), (std::vector<float>{1, 3, 9, 11}));

  // Walking backwards from the end to INT64_MIN reverses the whole axis.
  Tensor back_start = Int64Tensor({1}, {-1});
  Tensor back_end = Int64Tensor({1}, {kMin});
  Tensor axis1 = Int64Tensor({1}, {1});
  Tensor minus1 = Int64Tensor({1}, {-1});
  auto rev = RunOne(NodeSpec("Slice", 13), none, {&x, &back_start, &back_end, &axis1, &minus1});
  ASSERT_TRUE(rev.ok()) << rev.status().ToString();
  EXPECT_EQ(FloatsOf(*rev), (std::vector<float>{3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8}));

  // A start past the end leaves an empty axis.
  Tensor far = Int64Tensor({1}, {10});
  Tensor farther = Int64Tensor({1}, {20});
  auto empty = RunOne(NodeSpec("Slice", 13), none, {&x, &far, &farther, &axis1});
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->shape(), (std::vector<int64_t>{3, 0}));

  // Opset 1: attributes, and any element type (here int8).
  Tensor bytes = Typed<int8_t>(DataType::kInt8, {2, 3}, {1, 2, 3, 4, 5, 6});
  AttrBuilder attrs;
  attrs.Ints("starts", {1}).Ints("ends", {3}).Ints("axes", {1});
  auto old = RunOne(NodeSpec("Slice", 1), attrs, {&bytes});
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(ValuesOf<int8_t>(*old), (std::vector<int8_t>{2, 3, 5, 6}));

  Tensor zero = Int64Tensor({1}, {0});
  ExpectError(RunOne(NodeSpec("Slice", 13), none, {&x, &starts, &ends, &axes, &zero}).status(),
              StatusCode::kInvalidArgument, "starts has 2 elements but axes has 2 and steps has 1");
  Tensor zero2 = Int64Tensor({2}, {1, 0});
  ExpectError(RunOne(NodeSpec("Slice", 13), none, {&x, &starts, &ends, &axes, &zero2}).status(),
              StatusCode::kInvalidArgument, "step for axis -1 is 0");
  Tensor same = Int64Tensor({2}, {1, -1});
  ExpectError(RunOne(NodeSpec("Slice", 13), none, {&x, &starts, &ends, &same}).status(),
              StatusCode::kInvalidArgument, "axis -1 appears more than once in axes");
}

TEST(ExpandTest, BroadcastsBothWays) {
  Tensor x = FloatTensor({3, 1}, {1, 2, 3});
  AttrBuilder none;
  Tensor shape = Int64Tensor({3}, {2, 1, 2});
  auto r = RunOne(NodeSpec("Expand", 13), none, {&x, &shape});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->shape(), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(FloatsOf(*r), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  Tensor flags = Typed<uint8_t>(DataType::kBool, {2}, {1, 0});
  Tensor rows = Int64Tensor({2}, {2, 1});
  auto b = RunOne(NodeSpec("Expand", 13), none, {&flags, &rows});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(ValuesOf<uint8_t>(*b), (std::vector<uint8_t>{1, 0, 1, 0}));
  Tensor bad = Int64Tensor({1}, {4});
  Tensor y = CountFromZero({3, 2});
  ExpectError(RunOne(NodeSpec("Expand", 13), none, {&y, &bad}).status(),
              StatusCode::kInvalidArgument, "shapes [3,2] and [4] cannot be broadcast");
}

TEST(TileTest, RepeatsEachDim) {
  Tensor x = FloatTensor({2, 2}, {1, 2, 3, 4});
  AttrBuilder none;
  Tensor reps = Int64Tensor({2}, {2, 3});
  auto r = RunOne(NodeSpec("Tile", 13), none, {&x, &reps});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->shape(), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(FloatsOf(*r), (std::vector<float>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,
                                              1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  Tensor zero = Int64Tensor({2}, {0, 1});
  auto empty = RunOne(NodeSpec("Tile", 13), none, {&x, &zero});
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->shape(), (std::vector<int64_t>{0, 2}));
  Tensor short_reps = Int64Tensor({1}, {2});
  ExpectError(RunOne(NodeSpec("Tile", 13), none, {&x, &short_reps}).status(),
              StatusCode::kInvalidArgument, "repeats has 1 elements, expected the input rank 2");
}

TEST(PadTest, ModesNegativePadsAndAttributeForm) {
  Tensor x = Typed<int32_t>(DataType::kInt32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor pads = Int64Tensor({4}, {0, 2, 1, 1});
  struct Case {
    const char* mode;
    std::vector<int32_t> want;
  };
  for (const Case& c :
       std::vector<Case>{{"constant", {9, 9, 1, 2, 3, 9, 9, 9, 4, 5, 6, 9, 9, 9, 9, 9, 9, 9}},
                         {"reflect", {3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2}},
                         {"edge", {1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6, 4, 4, 4, 5, 6, 6}},
                         {"wrap", {2, 3, 1, 2, 3, 1, 5, 6, 4, 5, 6, 4, 2, 3, 1, 2, 3, 1}}}) {
    AttrBuilder attrs;
    attrs.String("mode", c.mode);
    Tensor value = Typed<int32_t>(DataType::kInt32, {}, {9});
    auto r = RunOne(NodeSpec("Pad", 13), attrs, {&x, &pads, &value});
    ASSERT_TRUE(r.ok()) << c.mode << ": " << r.status().ToString();
    EXPECT_EQ(r->shape(), (std::vector<int64_t>{3, 6})) << c.mode;
    EXPECT_EQ(ValuesOf<int32_t>(*r), c.want) << c.mode;
  }
  // Negative pads crop; the omitted constant is zero.
  Tensor crop = Int64Tensor({4}, {0, -1, 0, 1});
  AttrBuilder none;
  auto cropped = RunOne(NodeSpec("Pad", 13), none, {&x, &crop});
  ASSERT_TRUE(cropped.ok()) << cropped.status().ToString();
  EXPECT_EQ(ValuesOf<int32_t>(*cropped), (std::vector<int32_t>{2, 3, 0, 5, 6, 0}));

  // Opset 2: pads and value are attributes.
  Tensor f = FloatTensor({2}, {1, 2});
  AttrBuilder attrs;
  attrs.Ints("pads", {1, 2}).Float("value", -1.5f);
  auto old = RunOne(NodeSpec("Pad", 2), attrs, {&f});
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(FloatsOf(*old), (std::vector<float>{-1.5f, 1, 2, -1.5f, -1.5f}));

  Tensor odd = Int64Tensor({3}, {0, 1, 2});
  ExpectError(RunOne(NodeSpec("Pad", 13), none, {&x, &odd}).status(), StatusCode::kInvalidArgument,
              "pads has 3 elements, expected 4");
  AttrBuilder bad_mode;
  bad_mode.String("mode", "mirror");
  ExpectError(RunOne(NodeSpec("Pad", 13), bad_mode, {&x, &pads}).status(), StatusCode::kUnsupported,
              "Pad mode 'mirror' is not supported");
}

TEST(SplitTest, EqualVariableAndErrors) {
  Tensor x = CountFromZero({2, 6});
  NodeSpec three("Split", 13);
  three.outputs = 3;
  AttrBuilder axis1;
  axis1.Int("axis", 1);
  auto eq = RunNode(three, axis1, {&x});
  ASSERT_TRUE(eq.ok()) << eq.status().ToString();
  EXPECT_EQ(FloatsOf((*eq)[0]), (std::vector<float>{0, 1, 6, 7}));
  EXPECT_EQ(FloatsOf((*eq)[2]), (std::vector<float>{4, 5, 10, 11}));

  NodeSpec two("Split", 13);
  two.outputs = 2;
  Tensor sizes = Int64Tensor({2}, {1, 5});
  auto var = RunNode(two, axis1, {&x, &sizes});
  ASSERT_TRUE(var.ok()) << var.status().ToString();
  EXPECT_EQ((*var)[0].shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(FloatsOf((*var)[1]), (std::vector<float>{1, 2, 3, 4, 5, 7, 8, 9, 10, 11}));

  NodeSpec two11("Split", 11);
  two11.outputs = 2;
  AttrBuilder attr_split;
  attr_split.Ints("split", {4, 2}).Int("axis", -1);
  auto old = RunNode(two11, attr_split, {&x});
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ((*old)[1].shape(), (std::vector<int64_t>{2, 2}));

  // Opset 18 allows a smaller last part.
  NodeSpec four18("Split", 18);
  four18.outputs = 4;
  auto uneven = RunNode(four18, axis1, {&x});
  ASSERT_TRUE(uneven.ok()) << uneven.status().ToString();
  EXPECT_EQ((*uneven)[3].shape(), (std::vector<int64_t>{2, 0}));

  NodeSpec four("Split", 13);
  four.outputs = 4;
  ExpectError(RunNode(four, axis1, {&x}).status(), StatusCode::kInvalidArgument,
              "axis 1 of extent 6 does not split into 4 parts");
  Tensor wrong = Int64Tensor({2}, {2, 2});
  ExpectError(RunNode(two, axis1, {&x, &wrong}).status(), StatusCode::kInvalidArgument,
              "split sizes sum to 4, but axis 1 has extent 6");
}

TEST(RangeTest, FloatIntAndEmpty) {
  AttrBuilder none;
  Tensor s = FloatTensor({}, {1}), l = FloatTensor({}, {2.1f}), d = FloatTensor({}, {0.5f});
  auto r = RunOne(NodeSpec("Range", 11), none, {&s, &l, &d});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(FloatsOf(*r), (std::vector<float>{1, 1.5f, 2}));
  Tensor is = Typed<int32_t>(DataType::kInt32, {}, {10});
  Tensor il = Typed<int32_t>(DataType::kInt32, {}, {4});
  Tensor id = Typed<int32_t>(DataType::kInt32, {}, {-3});
  auto down = RunOne(NodeSpec("Range", 11), none, {&is, &il, &id});
  ASSERT_TRUE(down.ok()) << down.status().ToString();
  EXPECT_EQ(ValuesOf<int32_t>(*down), (std::vector<int32_t>{10, 7}));
  auto empty = RunOne(NodeSpec("Range", 11), none, {&il, &is, &id});
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->shape(), (std::vector<int64_t>{0}));
  Tensor zero = Typed<int32_t>(DataType::kInt32, {}, {0});
  ExpectError(RunOne(NodeSpec("Range", 11), none, {&is, &il, &zero}).status(),
              StatusCode::kInvalidArgument, "delta is 0");
}

TEST(ConstantOfShapeTest, ValueAttributeSetsTypeAndFill) {
  Tensor shape = Int64Tensor({2}, {2, 3});
  const int32_t seven = 7;
  Attributes attrs;
  AttributeValue value;
  value.name = "value";
  value.type = AttrType::kTensor;
  value.tensor = Tensor::View(DataType::kInt32, {1}, &seven, nullptr);
  attrs.Add(value);
  NodeInfo node;
  node.op_type = "ConstantOfShape";
  node.opset = 9;
  node.attrs = &attrs;
  node.inputs.resize(1);
  node.outputs.resize(1);
  const Tensor* inputs[] = {&shape};
  auto r = RunNodeOnce(node, inputs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].dtype(), DataType::kInt32);
  EXPECT_EQ(ValuesOf<int32_t>((*r)[0]), std::vector<int32_t>(6, 7));

  Attributes empty_attrs;
  node.attrs = &empty_attrs;
  auto zeros = RunNodeOnce(node, inputs);
  ASSERT_TRUE(zeros.ok()) << zeros.status().ToString();
  EXPECT_EQ(FloatsOf((*zeros)[0]), std::vector<float>(6, 0.0f));

  Tensor negative = Int64Tensor({1}, {-2});
  const Tensor* bad[] = {&negative};
  ExpectError(RunNodeOnce(node, bad).status(), StatusCode::kInvalidArgument,
              "negative dimension -2");
}

TEST(GatherElementsTest, AxesAndNegativeIndices) {
  Tensor x = FloatTensor({2, 2}, {1, 2, 3, 4});
  Tensor idx = Int64Tensor({2, 2}, {0, 0, 1, 0});
  AttrBuilder axis1;
  axis1.Int("axis", 1);
  auto r = RunOne(NodeSpec("GatherElements", 13), axis1, {&x, &idx});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(FloatsOf(*r), (std::vector<float>{1, 1, 4, 3}));
  Tensor y = CountFromZero({3, 3});
  Tensor neg = Typed<int32_t>(DataType::kInt32, {2, 3}, {-1, -2, 0, -2, 0, 0});
  AttrBuilder axis0;
  auto n = RunOne(NodeSpec("GatherElements", 13), axis0, {&y, &neg});
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(FloatsOf(*n), (std::vector<float>{6, 4, 2, 3, 1, 2}));
  Tensor far = Int64Tensor({1, 1}, {3});
  ExpectError(RunOne(NodeSpec("GatherElements", 13), axis0, {&y, &far}).status(),
              StatusCode::kInvalidArgument, "indices index 3 is out of range for a dim of 3");
}

TEST(GatherNDTest, TuplesSlabsAndBatchDims) {
  Tensor x = CountFromZero({2, 2, 2});
  Tensor idx = Int64Tensor({2, 2}, {0, 1, 1, 0});
  AttrBuilder none;
  auto r = RunOne(NodeSpec("GatherND", 13), none, {&x, &idx});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(FloatsOf(*r), (std::vector<float>{2, 3, 4, 5}));
  Tensor batch_idx = Int64Tensor({2, 1}, {1, -2});
  AttrBuilder batch;
  batch.Int("batch_dims", 1);
  auto b = RunOne(NodeSpec("GatherND", 13), batch, {&x, &batch_idx});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(FloatsOf(*b), (std::vector<float>{2, 3, 4, 5}));
  Tensor deep = Int64Tensor({1, 4}, {0, 0, 0, 0});
  ExpectError(RunOne(NodeSpec("GatherND", 13), none, {&x, &deep}).status(),
              StatusCode::kInvalidArgument, "indices' last dim 4 must be in [1, 3]");
}

TEST(ScatterTest, ElementsReductionsAndND) {
  Tensor data = FloatTensor({1, 5}, {1, 2, 3, 4, 5});
  Tensor idx = Int64Tensor({1, 2}, {1, 1});
  Tensor upd = FloatTensor({1, 2}, {1.5f, 2.5f});
  AttrBuilder add;
  add.Int("axis", 1).String("reduction", "add");
  auto r = RunOne(NodeSpec("ScatterElements", 16), add, {&data, &idx, &upd});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(FloatsOf(*r), (std::vector<float>{1, 6, 3, 4, 5}));
  AttrBuilder replace;
  replace.Int("axis", -1);
  Tensor neg = Int64Tensor({1, 2}, {-1, 0});
  auto s = RunOne(NodeSpec("Scatter", 10), replace, {&data, &neg, &upd});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(FloatsOf(*s), (std::vector<float>{2.5f, 2, 3, 4, 1.5f}));

  Tensor grid = Typed<int64_t>(DataType::kInt64, {2, 2, 2}, {1, 1, 1, 1, 2, 2, 2, 2});
  Tensor tuple = Int64Tensor({2, 1}, {1, 1});
  Tensor slabs = Typed<int64_t>(DataType::kInt64, {2, 2, 2}, {3, 3, 3, 3, 5, 5, 5, 5});
  AttrBuilder mul;
  mul.String("reduction", "mul");
  auto nd = RunOne(NodeSpec("ScatterND", 16), mul, {&grid, &tuple, &slabs});
  ASSERT_TRUE(nd.ok()) << nd.status().ToString();
  EXPECT_EQ(ValuesOf<int64_t>(*nd), (std::vector<int64_t>{1, 1, 1, 1, 30, 30, 30, 30}));

  Tensor far = Int64Tensor({1, 2}, {5, 0});
  ExpectError(RunOne(NodeSpec("ScatterElements", 16), add, {&data, &far, &upd}).status(),
              StatusCode::kInvalidArgument, "indices index 5 is out of range for a dim of 5");
  AttrBuilder bad;
  bad.String("reduction", "avg");
  ExpectError(RunOne(NodeSpec("ScatterND", 16), bad, {&grid, &tuple, &slabs}).status(),
              StatusCode::kUnsupported, "reduction 'avg' is not supported");
}

// Every integer width and bool take the reductions (bool: add is or, mul is and, as in ONNX
// Runtime); integers wrap.
TEST(ScatterTest, ReductionsOfEveryIntegerTypeAndBool) {
  Tensor idx = Int64Tensor({2}, {1, 1});
  AttrBuilder add, mul, max;
  add.String("reduction", "add");
  mul.String("reduction", "mul");
  max.String("reduction", "max");
  Tensor u16 = Typed<uint16_t>(DataType::kUint16, {3}, {1, 65535, 3});
  Tensor u16_upd = Typed<uint16_t>(DataType::kUint16, {2}, {1, 7});
  auto r = RunOne(NodeSpec("ScatterElements", 18), add, {&u16, &idx, &u16_upd});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ValuesOf<uint16_t>(*r), (std::vector<uint16_t>{1, 7, 3}));
  Tensor i16 = Typed<int16_t>(DataType::kInt16, {3}, {1, -2, 3});
  Tensor i16_upd = Typed<int16_t>(DataType::kInt16, {2}, {5, -4});
  auto m = RunOne(NodeSpec("ScatterElements", 18), max, {&i16, &idx, &i16_upd});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(ValuesOf<int16_t>(*m), (std::vector<int16_t>{1, 5, 3}));
  Tensor u64 = Typed<uint64_t>(DataType::kUint64, {3}, {1, 3, 3});
  // 3 * 2^63 * 3 wraps to 2^63.
  Tensor u64_upd = Typed<uint64_t>(DataType::kUint64, {2}, {uint64_t{1} << 63, 3});
  auto p = RunOne(NodeSpec("ScatterElements", 18), mul, {&u64, &idx, &u64_upd});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(ValuesOf<uint64_t>(*p), (std::vector<uint64_t>{1, uint64_t{1} << 63, 3}));
  Tensor u32 = Typed<uint32_t>(DataType::kUint32, {3}, {0, 10, 0});
  Tensor u32_upd = Typed<uint32_t>(DataType::kUint32, {2}, {4, 5});
  auto a = RunOne(NodeSpec("ScatterElements", 18), add, {&u32, &idx, &u32_upd});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(ValuesOf<uint32_t>(*a), (std::vector<uint32_t>{0, 19, 0}));
  // Bools as bytes (std::vector<bool> has no data()).
  Tensor flags = Typed<uint8_t>(DataType::kBool, {3}, {0, 0, 1});
  Tensor either = Typed<uint8_t>(DataType::kBool, {2}, {0, 1});
  auto any = RunOne(NodeSpec("ScatterElements", 18), add, {&flags, &idx, &either});
  ASSERT_TRUE(any.ok()) << any.status().ToString();
  EXPECT_EQ(ValuesOf<uint8_t>(*any), (std::vector<uint8_t>{0, 1, 1}));
  Tensor set = Typed<uint8_t>(DataType::kBool, {3}, {1, 1, 1});
  auto all = RunOne(NodeSpec("ScatterElements", 18), mul, {&set, &idx, &either});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(ValuesOf<uint8_t>(*all), (std::vector<uint8_t>{1, 0, 1}));
}

TEST(NonZeroTest, RowMajorCoordinatesAndNegativeZero) {
  Tensor x = FloatTensor({2, 3}, {0, 1, -0.0f, 2, 0, 3});
  AttrBuilder none;
  auto r = RunOne(NodeSpec("NonZero", 13), none, {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Int64sOf(*r), (std::vector<int64_t>{0, 1, 1, 1, 0, 2}));
  Tensor flags = Typed<uint8_t>(DataType::kBool, {3}, {0, 0, 0});
  auto none_set = RunOne(NodeSpec("NonZero", 13), none, {&flags});
  ASSERT_TRUE(none_set.ok()) << none_set.status().ToString();
  EXPECT_EQ(none_set->shape(), (std::vector<int64_t>{1, 0}));
}

TEST(OneHotTest, AxisNegativeAndOutOfRangeIndices) {
  Tensor idx = Int64Tensor({3}, {1, -1, 7});
  Tensor depth = FloatTensor({}, {4});
  Tensor values = Typed<int32_t>(DataType::kInt32, {2}, {-1, 5});
  AttrBuilder none;
  auto r = RunOne(NodeSpec("OneHot", 11), none, {&idx, &depth, &values});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(ValuesOf<int32_t>(*r),
            (std::vector<int32_t>{-1, 5, -1, -1, -1, -1, -1, 5, -1, -1, -1, -1}));
  AttrBuilder axis0;
  axis0.Int("axis", 0);
  Tensor fidx = FloatTensor({2}, {0.7f, 2});
  Tensor d3 = Int64Tensor({}, {3});
  Tensor fv = FloatTensor({2}, {0, 1});
  auto a = RunOne(NodeSpec("OneHot", 11), axis0, {&fidx, &d3, &fv});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(FloatsOf(*a), (std::vector<float>{1, 0, 0, 0, 0, 1}));
  Tensor two = FloatTensor({2}, {0, 1});
  Tensor zero = Int64Tensor({}, {0});
  ExpectError(RunOne(NodeSpec("OneHot", 11), none, {&idx, &zero, &two}).status(),
              StatusCode::kInvalidArgument, "depth must be one positive value");
}

TEST(TriluTest, UpperLowerWithK) {
  Tensor x = Typed<int64_t>(DataType::kInt64, {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  AttrBuilder upper;
  auto u = RunOne(NodeSpec("Trilu", 14), upper, {&x});
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(Int64sOf(*u), (std::vector<int64_t>{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}));
  AttrBuilder lower;
  lower.Int("upper", 0);
  Tensor k = Int64Tensor({}, {-1});
  auto l = RunOne(NodeSpec("Trilu", 14), lower, {&x, &k});
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(Int64sOf(*l), (std::vector<int64_t>{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}));
  Tensor big = Int64Tensor({}, {kMax});
  auto all = RunOne(NodeSpec("Trilu", 14), lower, {&x, &big});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(Int64sOf(*all), Int64sOf(x));
  Tensor v = FloatTensor({3}, {1, 2, 3});
  ExpectError(RunOne(NodeSpec("Trilu", 14), upper, {&v}).status(), StatusCode::kInvalidArgument,
              "input has rank 1, expected at least 2");
}

TEST(CompressTest, AxisFlattenedAndShortCondition) {
  Tensor x = FloatTensor({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor cond = Typed<uint8_t>(DataType::kBool, {2}, {0, 1});
  AttrBuilder axis0;
  axis0.Int("axis", 0);
  auto r = RunOne(NodeSpec("Compress", 11), axis0, {&x, &cond});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->shape(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(FloatsOf(*r), (std::vector<float>{3, 4}));
  Tensor flat = Typed<uint8_t>(DataType::kBool, {5}, {0, 1, 0, 0, 1});
  AttrBuilder none;
  auto f = RunOne(NodeSpec("Compress", 11), none, {&x, &flat});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(FloatsOf(*f), (std::vector<float>{2, 5}));
  Tensor longer = Typed<uint8_t>(DataType::kBool, {4}, {0, 0, 0, 1});
  ExpectError(RunOne(NodeSpec("Compress", 11), axis0, {&x, &longer}).status(),
              StatusCode::kInvalidArgument, "condition selects index 3 beyond the axis extent 3");
}

TEST(EyeLikeTest, DiagonalOffsetAndType) {
  Tensor x = Typed<int32_t>(DataType::kInt32, {3, 4}, std::vector<int32_t>(12, 5));
  AttrBuilder attrs;
  attrs.Int("k", 1).Int("dtype", static_cast<int64_t>(DataType::kFloat64));
  auto r = RunOne(NodeSpec("EyeLike", 9), attrs, {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->dtype(), DataType::kFloat64);
  EXPECT_EQ(ValuesOf<double>(*r), (std::vector<double>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  AttrBuilder below;
  below.Int("k", -2);
  auto b = RunOne(NodeSpec("EyeLike", 9), below, {&x});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(ValuesOf<int32_t>(*b), (std::vector<int32_t>{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}));
  AttrBuilder strings;
  strings.Int("dtype", static_cast<int64_t>(DataType::kString));
  ExpectError(RunOne(NodeSpec("EyeLike", 9), strings, {&x}).status(), StatusCode::kUnsupported,
              "EyeLike does not support type");
}

TEST(ReverseSequenceTest, TimeMajorAndBatchMajor) {
  Tensor x = CountFromZero({3, 2});  // [time, batch]
  Tensor lens = Int64Tensor({2}, {3, 2});
  AttrBuilder time_major;
  auto r = RunOne(NodeSpec("ReverseSequence", 10), time_major, {&x, &lens});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(FloatsOf(*r), (std::vector<float>{4, 3, 2, 1, 0, 5}));
  AttrBuilder batch_major;
  batch_major.Int("batch_axis", 0).Int("time_axis", 1);
  Tensor lens3 = Int64Tensor({3}, {1, 2, 0});
  auto b = RunOne(NodeSpec("ReverseSequence", 10), batch_major, {&x, &lens3});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(FloatsOf(*b), (std::vector<float>{0, 1, 3, 2, 4, 5}));
  Tensor too_long = Int64Tensor({2}, {4, 1});
  ExpectError(RunOne(NodeSpec("ReverseSequence", 10), time_major, {&x, &too_long}).status(),
              StatusCode::kInvalidArgument, "sequence length 4 is outside [0, 3]");
}

// Large inputs take the multi-threaded paths; the result must not depend on the thread count.
TEST(IndexingThreadsTest, LargeCopiesMatchSingleThread) {
  Tensor x = CountFromZero({256, 300});
  Tensor starts = Int64Tensor({2}, {-1, 1});
  Tensor ends = Int64Tensor({2}, {kMin, kMax});
  Tensor axes = Int64Tensor({2}, {0, 1});
  Tensor steps = Int64Tensor({2}, {-1, 1});
  Tensor pads = Int64Tensor({4}, {3, 5, 2, 7});
  Tensor reps = Int64Tensor({2}, {2, 3});
  AttrBuilder none;
  AttrBuilder reflect;
  reflect.String("mode", "reflect");
  struct Case {
    const char* op;
    const AttrBuilder* attrs;
    std::vector<const Tensor*> inputs;
  };
  for (const Case& c : std::vector<Case>{{"Slice", &none, {&x, &starts, &ends, &axes, &steps}},
                                         {"Pad", &reflect, {&x, &pads}},
                                         {"Tile", &none, {&x, &reps}}}) {
    NodeSpec one(c.op, 13);
    NodeSpec four(c.op, 13);
    four.threads = 4;
    auto a = RunOne(one, *c.attrs, c.inputs);
    auto b = RunOne(four, *c.attrs, c.inputs);
    ASSERT_TRUE(a.ok() && b.ok()) << c.op;
    EXPECT_EQ(a->shape(), b->shape()) << c.op;
    EXPECT_EQ(FloatsOf(*a), FloatsOf(*b)) << c.op;
  }
  // Spot checks against index arithmetic.
  auto sliced = RunOne(NodeSpec("Slice", 13), none, {&x, &starts, &ends, &axes, &steps});
  ASSERT_TRUE(sliced.ok());
  EXPECT_EQ(sliced->shape(), (std::vector<int64_t>{256, 299}));
  EXPECT_EQ(FloatsOf(*sliced)[0], 255 * 300 + 1);
  auto padded = RunOne(NodeSpec("Pad", 13), reflect, {&x, &pads});
  ASSERT_TRUE(padded.ok());
  EXPECT_EQ(padded->shape(), (std::vector<int64_t>{261, 312}));
  // Output (0, 0) reflects input (3, 5).
  EXPECT_EQ(FloatsOf(*padded)[0], 3 * 300 + 5);
}

TEST(UniqueTest, SortedFirstOccurrenceAndSlices) {
  Tensor x = FloatTensor({6}, {2, 1, 1, 3, 4, 3});
  NodeSpec spec("Unique", 11);
  spec.outputs = 4;
  AttrBuilder unsorted;
  unsorted.Int("sorted", 0);
  auto r = RunNode(spec, unsorted, {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(FloatsOf((*r)[0]), (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(Int64sOf((*r)[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(Int64sOf((*r)[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(Int64sOf((*r)[3]), (std::vector<int64_t>{1, 2, 2, 1}));
  AttrBuilder sorted;
  auto s = RunNode(spec, sorted, {&x});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(FloatsOf((*s)[0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(Int64sOf((*s)[2]), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));

  // Columns compare lexicographically: [1,0] < [1,2], and the two [1,2] columns merge.
  Tensor m = Typed<int32_t>(DataType::kInt32, {2, 3}, {1, 1, 1, 2, 0, 2});
  AttrBuilder columns;
  columns.Int("axis", -1);
  auto c = RunNode(spec, columns, {&m});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)[0].shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(ValuesOf<int32_t>((*c)[0]), (std::vector<int32_t>{1, 1, 0, 2}));
  EXPECT_EQ(Int64sOf((*c)[3]), (std::vector<int64_t>{1, 2}));
  AttrBuilder far;
  far.Int("axis", 2);
  ExpectError(RunNode(spec, far, {&m}).status(), StatusCode::kInvalidArgument,
              "axis 2 is out of range for rank 2");
}

}  // namespace
}  // namespace epctx::exec::testing
