// Reduce* ops, ArgMax/ArgMin, TopK and CumSum against references computed here by index
// arithmetic, across axes layouts (contiguous, split, all), opset forms and dtypes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

// Reference reduction in double: `map` per element, summed (or max/min via `combine`), then
// `finish(acc, count)`; reduced dims keep extent 1.
struct RefOp {
  double init;
  std::function<double(double)> map;
  std::function<double(double, double)> combine;
  std::function<double(double, int64_t)> finish;
};

std::vector<double> RefReduce(const std::vector<int64_t>& shape, const std::vector<float>& x,
                              const std::vector<bool>& reduced, const RefOp& op) {
  std::vector<int64_t> out_shape;
  int64_t count = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    out_shape.push_back(reduced[d] ? 1 : shape[d]);
    if (reduced[d]) count *= shape[d];
  }
  std::vector<double> acc(static_cast<size_t>(Count(out_shape)), op.init);
  std::vector<int64_t> pos(shape.size(), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < shape.size(); ++d) o = o * out_shape[d] + (reduced[d] ? 0 : pos[d]);
    acc[static_cast<size_t>(o)] = op.combine(acc[static_cast<size_t>(o)], op.map(x[i]));
    for (size_t d = shape.size(); d-- > 0;) {
      if (++pos[d] < shape[d]) break;
      pos[d] = 0;
    }
  }
  for (double& a : acc) a = op.finish(a, count);
  return acc;
}

const RefOp kSumRef{0, [](double v) { return v; }, std::plus<double>(),
                    [](double a, int64_t) { return a; }};

TEST(ReduceTest, AllOpsOverSplitAxesMatchReference) {
  std::mt19937 rng(7);
  const std::vector<int64_t> shape{3, 4, 5};
  Tensor x = RandomFloats(shape, rng, 0.5f, 2.0f);
  const std::vector<float> xs = FloatsOf(x);
  auto sum = std::plus<double>();
  auto same = [](double a, int64_t) { return a; };
  auto ident = [](double v) { return v; };
  auto square = [](double v) { return v * v; };
  auto max = [](double a, double b) { return std::max(a, b); };
  auto min = [](double a, double b) { return std::min(a, b); };
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* op;
    RefOp ref;
  };
  const std::vector<Case> cases{
      {"ReduceMean", {0, ident, sum, [](double a, int64_t n) { return a / n; }}},
      {"ReduceMax", {-inf, ident, max, same}},
      {"ReduceMin", {inf, ident, min, same}},
      {"ReduceProd", {1, ident, std::multiplies<double>(), same}},
      {"ReduceL1", {0, [](double v) { return std::fabs(v); }, sum, same}},
      {"ReduceL2", {0, square, sum, [](double a, int64_t) { return std::sqrt(a); }}},
      {"ReduceLogSum", {0, ident, sum, [](double a, int64_t) { return std::log(a); }}},
      {"ReduceLogSumExp",
       {0, [](double v) { return std::exp(v); }, sum,
        [](double a, int64_t) { return std::log(a); }}},
      {"ReduceSumSquare", {0, square, sum, same}},
  };
  // {0, 2} leaves a kept dim between two reduced ones; {1} reduces a middle dim; {} reduces all.
  for (const auto& axes : std::vector<std::vector<int64_t>>{{0, 2}, {-2}, {2}, {}}) {
    std::vector<bool> reduced(3, axes.empty());
    for (int64_t a : axes) reduced[static_cast<size_t>(a < 0 ? a + 3 : a)] = true;
    for (const Case& c : cases) {
      AttrBuilder attrs;
      if (!axes.empty()) attrs.Ints("axes", axes);
      auto r = RunNode(NodeSpec(c.op, 13), attrs, {&x});
      ASSERT_TRUE(r.ok()) << c.op << ": " << r.status().ToString();
      std::vector<int64_t> out_shape;
      for (size_t d = 0; d < 3; ++d) out_shape.push_back(reduced[d] ? 1 : shape[d]);
      ExpectClose((*r)[0], out_shape, RefReduce(shape, xs, reduced, c.ref), 1e-5, 1e-5,
                  std::string(c.op) + " axes " + ShapeToString(axes));
    }
  }
}

TEST(ReduceTest, SumTakesAxesInputFromOpset13AndHonoursKeepdimsAndNoop) {
  std::vector<float> v(24);
  std::iota(v.begin(), v.end(), 1.0f);
  Tensor x = FloatTensor({2, 3, 4}, v);
  Tensor axes = Int64Tensor({2}, {0, -1});
  AttrBuilder drop;
  drop.Int("keepdims", 0);
  auto r = RunNode(NodeSpec("ReduceSum", 13), drop, {&x, &axes});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Row j of the middle dim sums 4 elements of each of the two outer blocks.
  ExpectClose((*r)[0], {3}, {10 + 58, 26 + 74, 42 + 90}, 0, 0, "ReduceSum axes {0,-1}");

  AttrBuilder noop;
  noop.Int("noop_with_empty_axes", 1);
  Tensor none = Int64Tensor({0}, {});
  auto same = RunNode(NodeSpec("ReduceSum", 13), noop, {&x, &none});
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(FloatsOf((*same)[0]), v);

  AttrBuilder keep;
  auto all = RunNode(NodeSpec("ReduceSum", 13), keep, {&x, &none});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ExpectClose((*all)[0], {1, 1, 1}, {300}, 0, 0, "ReduceSum empty axes");
  auto omitted = RunNode(NodeSpec("ReduceSum", 13), keep, {&x, nullptr});
  ASSERT_TRUE(omitted.ok()) << omitted.status().ToString();
  ExpectClose((*omitted)[0], {1, 1, 1}, {300}, 0, 0, "ReduceSum omitted axes");

  // Opset 11 reads the attribute; opset 18 moves ReduceMean's axes to an input too.
  AttrBuilder attr_axes;
  attr_axes.Ints("axes", {1});
  auto old = RunNode(NodeSpec("ReduceSum", 11), attr_axes, {&x});
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ((*old)[0].shape(), (std::vector<int64_t>{2, 1, 4}));
  Tensor middle = Int64Tensor({1}, {1});
  auto mean18 = RunNode(NodeSpec("ReduceMean", 18), keep, {&x, &middle});
  ASSERT_TRUE(mean18.ok()) << mean18.status().ToString();
  ExpectClose((*mean18)[0], {2, 1, 4}, {5, 6, 7, 8, 17, 18, 19, 20}, 0, 0, "ReduceMean 18");
}

TEST(ReduceTest, LargeReductionsSplitAcrossThreads) {
  std::mt19937 rng(3);
  const std::vector<int64_t> shape{96, 1000};
  Tensor x = RandomFloats(shape, rng);
  const std::vector<float> xs = FloatsOf(x);
  for (int64_t axis : {0, 1}) {
    NodeSpec spec("ReduceSum", 11);
    spec.threads = 4;
    AttrBuilder attrs;
    attrs.Ints("axes", {axis});
    auto r = RunNode(spec, attrs, {&x});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<bool> reduced{axis == 0, axis == 1};
    std::vector<int64_t> out_shape{axis == 0 ? 1 : 96, axis == 1 ? 1 : 1000};
    ExpectClose((*r)[0], out_shape, RefReduce(shape, xs, reduced, kSumRef), 1e-4, 1e-4,
                "ReduceSum axis " + std::to_string(axis));
  }
}

TEST(ReduceTest, IntegerTypesAndEdgeValues) {
  Tensor ints = Typed<int32_t>(DataType::kInt32, {2, 3}, {1, 2, 4, -7, 5, 9});
  AttrBuilder axis1;
  axis1.Ints("axes", {1}).Int("keepdims", 0);
  auto mean = RunNode(NodeSpec("ReduceMean", 13), axis1, {&ints});
  ASSERT_TRUE(mean.ok()) << mean.status().ToString();
  EXPECT_EQ(ValuesOf<int32_t>((*mean)[0]), (std::vector<int32_t>{2, 2}));  // 7/3, 7/3
  Tensor longs = Typed<int64_t>(DataType::kInt64, {2, 3}, {1, 2, 4, -7, 5, 9});
  auto max = RunNode(NodeSpec("ReduceMax", 13), axis1, {&longs});
  ASSERT_TRUE(max.ok()) << max.status().ToString();
  EXPECT_EQ(ValuesOf<int64_t>((*max)[0]), (std::vector<int64_t>{4, 9}));

  // Shifting by the maximum keeps log-sum-exp finite where exp alone overflows.
  Tensor big = FloatTensor({2}, {1000, 1000});
  AttrBuilder none;
  auto lse = RunNode(NodeSpec("ReduceLogSumExp", 13), none, {&big});
  ASSERT_TRUE(lse.ok()) << lse.status().ToString();
  ExpectClose((*lse)[0], {1}, {1000 + std::log(2.0)}, 1e-3, 0, "ReduceLogSumExp large");

  // An empty reduction gives the identity: 0 for sums, -inf for max.
  Tensor empty = FloatTensor({2, 0}, {});
  auto zero = RunNode(NodeSpec("ReduceSum", 11), axis1, {&empty});
  ASSERT_TRUE(zero.ok()) << zero.status().ToString();
  EXPECT_EQ(FloatsOf((*zero)[0]), (std::vector<float>{0, 0}));
  auto lowest = RunNode(NodeSpec("ReduceMax", 13), axis1, {&empty});
  ASSERT_TRUE(lowest.ok()) << lowest.status().ToString();
  EXPECT_EQ(FloatsOf((*lowest)[0]),
            (std::vector<float>(2, -std::numeric_limits<float>::infinity())));
}

// Each integer reduction over rows of every length from 1 to 70, against sums taken here in
// int64 and wrapped to the type. Rows of 8 to 64 elements are where GCC 12's vectorized
// four-accumulator loop summed integers wrongly (the int64 sum of 0..15 was 64).
template <typename T>
void CheckIntegerRuns(DataType type, int64_t lo, int64_t hi) {
  std::mt19937 rng(11);
  struct Case {
    const char* op;
    int64_t init;
    std::function<int64_t(int64_t, int64_t)> combine;  // (accumulated, element)
    bool mean = false;
  };
  const std::vector<Case> cases{
      {"ReduceSum", 0, [](int64_t a, int64_t v) { return a + v; }},
      {"ReduceMean", 0, [](int64_t a, int64_t v) { return a + v; }, true},
      {"ReduceL1", 0, [](int64_t a, int64_t v) { return a + (v < 0 ? -v : v); }},
      {"ReduceSumSquare", 0, [](int64_t a, int64_t v) { return a + v * v; }},
      {"ReduceMax", std::numeric_limits<int64_t>::min(),
       [](int64_t a, int64_t v) { return std::max(a, v); }},
      {"ReduceMin", std::numeric_limits<int64_t>::max(),
       [](int64_t a, int64_t v) { return std::min(a, v); }},
  };
  AttrBuilder axis1;
  axis1.Ints("axes", {1}).Int("keepdims", 0);
  for (int64_t n = 1; n <= 70; ++n) {
    std::vector<T> values(static_cast<size_t>(2 * n));
    for (T& v : values) v = static_cast<T>(Pick(rng, lo, hi));
    Tensor x = Typed<T>(type, {2, n}, values);
    for (const Case& c : cases) {
      auto r = RunNode(NodeSpec(c.op, 11), axis1, {&x});
      ASSERT_TRUE(r.ok()) << c.op << ": " << r.status().ToString();
      std::vector<T> want;
      for (int64_t row = 0; row < 2; ++row) {
        int64_t acc = c.init;
        for (int64_t i = 0; i < n; ++i) {
          acc = c.combine(acc, static_cast<int64_t>(values[static_cast<size_t>(row * n + i)]));
        }
        // The sum wraps to T's width first; ONNX's integer mean divides that, truncating.
        T wrapped = static_cast<T>(acc);
        want.push_back(c.mean ? static_cast<T>(static_cast<int64_t>(wrapped) / n) : wrapped);
      }
      EXPECT_EQ(ValuesOf<T>((*r)[0]), want)
          << c.op << " of rows of " << n << " " << DataTypeName(type);
    }
  }
}

TEST(ReduceTest, IntegerRunsOfEveryLength) {
  CheckIntegerRuns<int64_t>(DataType::kInt64, -1000, 1000);
  CheckIntegerRuns<int32_t>(DataType::kInt32, -1000, 1000);
  CheckIntegerRuns<int8_t>(DataType::kInt8, -9, 9);
  CheckIntegerRuns<uint8_t>(DataType::kUint8, 0, 9);
}

TEST(ReduceTest, BadAxesAndTypesAreReported) {
  Tensor x = FloatTensor({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  AttrBuilder twice;
  twice.Ints("axes", {1, -2});
  ExpectError(RunNode(NodeSpec("ReduceMean", 13), twice, {&x}).status(),
              StatusCode::kInvalidArgument, "axis -2 appears more than once in axes");
  AttrBuilder far;
  far.Ints("axes", {3});
  ExpectError(RunNode(NodeSpec("ReduceMax", 13), far, {&x}).status(), StatusCode::kInvalidArgument,
              "axis 3 is out of range for rank 3");
  Tensor ints = Typed<int32_t>(DataType::kInt32, {2}, {1, 2});
  AttrBuilder none;
  ExpectError(RunNode(NodeSpec("ReduceL2", 13), none, {&ints}).status(), StatusCode::kUnsupported,
              "input 0 has type int32, which ReduceL2 does not run on (it takes float32, float64)");
  Tensor halves = Typed<uint16_t>(DataType::kFloat16, {2}, {0, 0});
  ExpectError(RunNode(NodeSpec("ReduceSum", 13), none, {&halves}).status(),
              StatusCode::kUnsupported,
              "input 0 has type float16, which ReduceSum does not run on (it takes float32, "
              "float64, int8, int32, int64, uint8)");
}

// ArgMax, TopK and CumSum split large inputs across threads; results must not change.
TEST(ReduceThreadsTest, LargeInputsMatchSingleThread) {
  std::mt19937 rng(11);
  Tensor x = RandomFloats({64, 700}, rng);
  Tensor k = Int64Tensor({1}, {5});
  Tensor axis = Int64Tensor({}, {1});
  AttrBuilder axis0;
  axis0.Int("axis", 0);
  AttrBuilder none;
  for (const char* op : {"ArgMax", "TopK", "CumSum"}) {
    const bool topk = std::string(op) == "TopK";
    const bool cumsum = std::string(op) == "CumSum";
    std::vector<const Tensor*> inputs{&x};
    if (topk) inputs.push_back(&k);
    if (cumsum) inputs.push_back(&axis);
    NodeSpec one(op, 14);
    one.outputs = topk ? 2 : 1;
    NodeSpec four = one;
    four.threads = 4;
    const AttrBuilder& attrs = topk || cumsum ? none : axis0;
    auto a = RunNode(one, attrs, inputs);
    auto b = RunNode(four, attrs, inputs);
    ASSERT_TRUE(a.ok() && b.ok()) << op;
    for (size_t i = 0; i < a->size(); ++i) {
      const Tensor& ta = (*a)[i];
      const Tensor& tb = (*b)[i];
      ASSERT_EQ(ta.shape(), tb.shape()) << op;
      ASSERT_EQ(ta.byte_size(), tb.byte_size()) << op;
      EXPECT_EQ(0, std::memcmp(ta.data(), tb.data(), ta.byte_size())) << op << " output " << i;
    }
  }
}

TEST(ArgReduceTest, TiesPickFirstUnlessSelectLastIndex) {
  Tensor x = FloatTensor({2, 3}, {2, 7, 7, 5, 1, 5});
  AttrBuilder row;
  row.Int("axis", 1);
  auto first = RunNode(NodeSpec("ArgMax", 13), row, {&x});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ((*first)[0].shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(Int64sOf((*first)[0]), (std::vector<int64_t>{1, 0}));
  AttrBuilder last;
  last.Int("axis", -1).Int("select_last_index", 1).Int("keepdims", 0);
  auto l = RunNode(NodeSpec("ArgMax", 13), last, {&x});
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ((*l)[0].shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(Int64sOf((*l)[0]), (std::vector<int64_t>{2, 2}));
  AttrBuilder column;  // axis 0 by default: a reduction over rows, kept inner dim
  auto mins = RunNode(NodeSpec("ArgMin", 13), column, {&x});
  ASSERT_TRUE(mins.ok()) << mins.status().ToString();
  EXPECT_EQ(Int64sOf((*mins)[0]), (std::vector<int64_t>{0, 1, 1}));
  Tensor ints = Typed<int64_t>(DataType::kInt64, {4}, {3, -1, -1, 2});
  AttrBuilder lastmin;
  lastmin.Int("select_last_index", 1);
  auto m = RunNode(NodeSpec("ArgMin", 13), lastmin, {&ints});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(Int64sOf((*m)[0]), (std::vector<int64_t>{2}));
  AttrBuilder far;
  far.Int("axis", 2);
  ExpectError(RunNode(NodeSpec("ArgMax", 13), far, {&x}).status(), StatusCode::kInvalidArgument,
              "axis 2 is out of range for rank 2");
}

TEST(TopKTest, LargestSmallestTiesAndNaN) {
  Tensor x = FloatTensor({2, 4}, {1, 3, 3, 2, 4, 0, 4, -1});
  Tensor k2 = Int64Tensor({1}, {2});
  AttrBuilder largest;
  NodeSpec spec("TopK", 11);
  spec.outputs = 2;
  auto r = RunNode(spec, largest, {&x, &k2});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(FloatsOf((*r)[0]), (std::vector<float>{3, 3, 4, 4}));
  EXPECT_EQ(Int64sOf((*r)[1]), (std::vector<int64_t>{1, 2, 0, 2}));
  AttrBuilder smallest;
  smallest.Int("largest", 0).Int("axis", 0);
  Tensor k1 = Int64Tensor({1}, {1});
  auto s = RunNode(spec, smallest, {&x, &k1});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)[0].shape(), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(FloatsOf((*s)[0]), (std::vector<float>{1, 0, 3, -1}));
  EXPECT_EQ(Int64sOf((*s)[1]), (std::vector<int64_t>{0, 1, 0, 1}));

  // NaN ranks above every number; the ordering stays consistent instead of undefined.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor n = FloatTensor({4}, {1, nan, 5, nan});
  Tensor k3 = Int64Tensor({1}, {3});
  auto top = RunNode(spec, largest, {&n, &k3});
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  EXPECT_EQ(Int64sOf((*top)[1]), (std::vector<int64_t>{1, 3, 2}));

  // Opset 1 takes k as an attribute.
  AttrBuilder attr_k;
  attr_k.Int("k", 1);
  NodeSpec spec1("TopK", 1);
  spec1.outputs = 2;
  auto old = RunNode(spec1, attr_k, {&x});
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(FloatsOf((*old)[0]), (std::vector<float>{3, 4}));

  Tensor k5 = Int64Tensor({1}, {5});
  ExpectError(RunNode(spec, largest, {&x, &k5}).status(), StatusCode::kInvalidArgument,
              "k 5 is out of range for axis 1 of extent 4");
}

TEST(CumSumTest, ExclusiveReverseAndAxes) {
  Tensor x = Typed<double>(DataType::kFloat64, {5}, {1, 2, 3, 4, 5});
  Tensor axis0 = Typed<int32_t>(DataType::kInt32, {}, {0});
  struct Case {
    int64_t exclusive, reverse;
    std::vector<double> want;
  };
  for (const Case& c : std::vector<Case>{{0, 0, {1, 3, 6, 10, 15}},
                                         {1, 0, {0, 1, 3, 6, 10}},
                                         {0, 1, {15, 14, 12, 9, 5}},
                                         {1, 1, {14, 12, 9, 5, 0}}}) {
    AttrBuilder attrs;
    attrs.Int("exclusive", c.exclusive).Int("reverse", c.reverse);
    auto r = RunNode(NodeSpec("CumSum", 14), attrs, {&x, &axis0});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(ValuesOf<double>((*r)[0]), c.want)
        << "exclusive " << c.exclusive << " reverse " << c.reverse;
  }
  Tensor m = Typed<int64_t>(DataType::kInt64, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor last = Int64Tensor({}, {-1});
  AttrBuilder none;
  auto rows = RunNode(NodeSpec("CumSum", 14), none, {&m, &last});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(ValuesOf<int64_t>((*rows)[0]), (std::vector<int64_t>{1, 3, 6, 4, 9, 15}));
  Tensor first = Int64Tensor({}, {0});
  auto cols = RunNode(NodeSpec("CumSum", 14), none, {&m, &first});
  ASSERT_TRUE(cols.ok()) << cols.status().ToString();
  EXPECT_EQ(ValuesOf<int64_t>((*cols)[0]), (std::vector<int64_t>{1, 2, 3, 5, 7, 9}));
  Tensor far = Int64Tensor({}, {2});
  ExpectError(RunNode(NodeSpec("CumSum", 14), none, {&m, &far}).status(),
              StatusCode::kInvalidArgument, "axis 2 is out of range for rank 2");
}

}  // namespace
}  // namespace epctx::exec::testing
