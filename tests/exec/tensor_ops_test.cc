// Flatten, Reshape, Transpose, Concat, Squeeze, Unsqueeze, Shape and Gather: exact results
// against index arithmetic done here, across opset variants and negative axes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

Tensor CountFromOne(const std::vector<int64_t>& shape) {
  std::vector<float> v(static_cast<size_t>(Count(shape)));
  std::iota(v.begin(), v.end(), 1.0f);
  return FloatTensor(shape, v);
}

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> out;
  for (float v : FloatsOf(t)) out.push_back(v);
  return out;
}

TEST(FlattenTest, AxesIncludingNegativeAndRank) {
  Tensor x = CountFromOne({2, 3, 4});
  const auto data = AsDoubles(x);
  for (auto [axis, rows] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 1}, {1, 2}, {2, 6}, {3, 24}, {-1, 6}, {-3, 1}}) {
    AttrBuilder attrs;
    attrs.Int("axis", axis);
    auto r = RunOne(NodeSpec("Flatten", 13), attrs, {&x});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ExpectClose(*r, {rows, 24 / rows}, data, 0, 0, "Flatten axis " + std::to_string(axis));
  }
  AttrBuilder bad;
  bad.Int("axis", 4);
  ExpectError(RunOne(NodeSpec("Flatten", 13), bad, {&x}).status(), StatusCode::kInvalidArgument,
              "axis 4 is out of range for rank 3");
}

TEST(ReshapeTest, ZeroCopiesMinusOneInfersAllowZero) {
  Tensor x = CountFromOne({2, 3, 4});
  const auto data = AsDoubles(x);
  AttrBuilder none;
  struct Case {
    std::vector<int64_t> shape, expected;
  };
  for (const Case& c : std::vector<Case>{{{4, -1}, {4, 6}},
                                         {{0, -1}, {2, 12}},
                                         {{0, 0, 2, 2}, {2, 3, 2, 2}},
                                         {{-1}, {24}},
                                         {{2, 3, 4}, {2, 3, 4}}}) {
    Tensor s = Int64Tensor({static_cast<int64_t>(c.shape.size())}, c.shape);
    auto r = RunOne(NodeSpec("Reshape", 13), none, {&x, &s});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ExpectClose(*r, c.expected, data, 0, 0, "Reshape to " + ShapeToString(c.expected));
  }
  Tensor empty = FloatTensor({0, 3}, {});
  Tensor zero_shape = Int64Tensor({2}, {3, 0});
  AttrBuilder allow;
  allow.Int("allowzero", 1);
  auto z = RunOne(NodeSpec("Reshape", 14), allow, {&empty, &zero_shape});
  ASSERT_TRUE(z.ok()) << z.status().ToString();
  EXPECT_EQ(z->shape(), (std::vector<int64_t>{3, 0}));

  Tensor two = Int64Tensor({2}, {-1, -1});
  ExpectError(RunOne(NodeSpec("Reshape", 13), none, {&x, &two}).status(),
              StatusCode::kInvalidArgument, "shape [?,?] has more than one -1");
  Tensor five = Int64Tensor({2}, {5, -1});
  ExpectError(RunOne(NodeSpec("Reshape", 13), none, {&x, &five}).status(),
              StatusCode::kInvalidArgument, "cannot reshape [2,3,4] to [5,?]: 24 elements");
  Tensor wrong = Int64Tensor({2}, {5, 5});
  ExpectError(RunOne(NodeSpec("Reshape", 13), none, {&x, &wrong}).status(),
              StatusCode::kInvalidArgument,
              "cannot reshape [2,3,4] (24 elements) to [5,5] (25 elements)");
}

TEST(TransposeTest, RandomPermutationsAndTypes) {
  std::mt19937 rng(61);
  for (int t = 0; t < 100; ++t) {
    const size_t rank = static_cast<size_t>(Pick(rng, 1, 5));
    std::vector<int64_t> shape;
    for (size_t d = 0; d < rank; ++d) shape.push_back(Pick(rng, 1, 5));
    std::vector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    const bool use_default = Pick(rng, 0, 4) == 0;
    if (use_default) std::iota(perm.rbegin(), perm.rend(), 0);
    // Alternating int64 and int32 data covers the 8-byte and the 4-byte copy paths.
    std::vector<int64_t> values(static_cast<size_t>(Count(shape)));
    std::iota(values.begin(), values.end(), 100);
    const std::vector<int32_t> values32(values.begin(), values.end());
    Tensor x = t % 2 == 0 ? Int64Tensor(shape, values)
                          : MakeTensor(DataType::kInt32, shape, values32.data());
    AttrBuilder attrs;
    if (!use_default) attrs.Ints("perm", perm);
    auto r = RunOne(NodeSpec("Transpose", 13), attrs, {&x});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<int64_t> out_shape(rank);
    for (size_t d = 0; d < rank; ++d) out_shape[d] = shape[static_cast<size_t>(perm[d])];
    ASSERT_EQ(r->shape(), out_shape);
    std::vector<int64_t> in_strides(rank, 1);
    for (size_t d = rank - 1; d-- > 0;) in_strides[d] = in_strides[d + 1] * shape[d + 1];
    std::vector<int64_t> got;
    if (t % 2 == 0) {
      got = Int64sOf(*r);
    } else {
      got.assign(r->data_as<int32_t>(), r->data_as<int32_t>() + r->element_count());
    }
    for (int64_t o = 0; o < Count(out_shape); ++o) {
      int64_t rest = o, src = 0;
      for (size_t d = rank; d-- > 0;) {
        src += (rest % out_shape[d]) * in_strides[static_cast<size_t>(perm[d])];
        rest /= out_shape[d];
      }
      ASSERT_EQ(got[static_cast<size_t>(o)], values[static_cast<size_t>(src)])
          << ShapeToString(shape) << " perm " << ShapeToString(perm) << " at " << o;
    }
  }
  Tensor x = CountFromOne({2, 3});
  AttrBuilder bad;
  bad.Ints("perm", {0, 0});
  ExpectError(RunOne(NodeSpec("Transpose", 13), bad, {&x}).status(), StatusCode::kInvalidArgument,
              "perm [0,0] is not a permutation of the 2 input dims");
}

TEST(ConcatTest, AxesAndErrors) {
  Tensor a = CountFromOne({2, 3, 2});
  Tensor b = CountFromOne({2, 1, 2});
  Tensor c = CountFromOne({2, 4, 2});
  AttrBuilder attrs;
  attrs.Int("axis", -2);
  auto r = RunOne(NodeSpec("Concat", 13), attrs, {&a, &b, &c});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<double> ref;
  for (int64_t o = 0; o < 2; ++o) {
    for (const Tensor* t : {&a, &b, &c}) {
      const auto v = FloatsOf(*t);
      const int64_t block = t->shape()[1] * 2;
      for (int64_t i = 0; i < block; ++i) ref.push_back(v[static_cast<size_t>(o * block + i)]);
    }
  }
  ExpectClose(*r, {2, 8, 2}, ref, 0, 0, "Concat axis -2");

  Tensor i1 = Int64Tensor({2}, {1, 2});
  Tensor i2 = Int64Tensor({0}, {});
  Tensor i3 = Int64Tensor({1}, {3});
  AttrBuilder axis0;
  axis0.Int("axis", 0);
  auto ints = RunOne(NodeSpec("Concat", 13), axis0, {&i1, &i2, &i3});
  ASSERT_TRUE(ints.ok()) << ints.status().ToString();
  EXPECT_EQ(Int64sOf(*ints), (std::vector<int64_t>{1, 2, 3}));

  ExpectError(RunOne(NodeSpec("Concat", 13), axis0, {&a, &b}).status(),
              StatusCode::kInvalidArgument,
              "input 1 has shape [2,1,2], which does not match input 0's [2,3,2] outside axis 0");
  ExpectError(RunOne(NodeSpec("Concat", 13), axis0, {&a, &i1}).status(),
              StatusCode::kInvalidArgument, "input 1 has type int64, input 0 has float32");
  AttrBuilder none;
  ExpectError(RunOne(NodeSpec("Concat", 13), none, {&a}).status(), StatusCode::kInvalidArgument,
              "required attribute 'axis' is missing");
}

// Concats of 64 KiB or more are copied by several threads, each a contiguous range of the
// output's bytes: ranges that start and end inside blocks, an empty input, in every split.
TEST(ConcatTest, LargeConcatsSplitOverThreadsAreExact) {
  std::mt19937 rng(7);
  // A decode step's key cache: [1, 3, past, 64] and the new [1, 3, 1, 64] along axis 2.
  std::vector<std::vector<std::vector<int64_t>>> cases = {
      {{1, 3, 200, 64}, {1, 3, 1, 64}},
      {{5, 7, 3, 333}, {5, 7, 0, 333}, {5, 7, 11, 333}, {5, 7, 1, 333}},
      {{1, 1, 40001, 1}, {1, 1, 3, 1}}};
  for (const auto& shapes : cases) {
    std::vector<Tensor> inputs;
    for (const auto& shape : shapes) {
      std::vector<float> v(static_cast<size_t>(Count(shape)));
      for (float& x : v) x = std::uniform_real_distribution<float>(-1, 1)(rng);
      inputs.push_back(FloatTensor(shape, v));
    }
    std::vector<const Tensor*> ptrs;
    for (const Tensor& t : inputs) ptrs.push_back(&t);
    std::vector<int64_t> out_shape = shapes[0];
    out_shape[2] = 0;
    std::vector<double> ref;
    const int64_t outer = shapes[0][0] * shapes[0][1], inner = shapes[0][3];
    for (int64_t o = 0; o < outer; ++o) {
      for (const Tensor& t : inputs) {
        const auto v = FloatsOf(t);
        const int64_t block = t.shape()[2] * inner;
        for (int64_t i = 0; i < block; ++i) ref.push_back(v[static_cast<size_t>(o * block + i)]);
      }
    }
    for (const auto& shape : shapes) out_shape[2] += shape[2];
    AttrBuilder attrs;
    attrs.Int("axis", 2);
    for (int threads : {1, 2, 3}) {
      NodeSpec spec("Concat", 13);
      spec.threads = threads;
      auto r = RunOne(spec, attrs, ptrs);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ExpectClose(*r, out_shape, ref, 0, 0,
                  fmt::format("{} inputs, {} threads", shapes.size(), threads));
    }
  }
}

// A run context whose output 0 is a view of `out` (as an arena slot is), so that inputs can be
// placed inside it the way the memory plan places a Concat's inputs.
class SlotContext final : public KernelContext {
 public:
  SlotContext(std::vector<const Tensor*> inputs, std::vector<float>& out)
      : inputs_(std::move(inputs)), out_(out) {}
  size_t input_count() const override { return inputs_.size(); }
  const Tensor* input(size_t i) const override { return i < inputs_.size() ? inputs_[i] : nullptr; }
  size_t output_count() const override { return 1; }
  Result<Tensor*> AllocateOutput(size_t, DataType type, std::vector<int64_t> shape) override {
    y_ = Tensor::View(type, std::move(shape), out_.data(), nullptr);
    return &y_;
  }
  Status SetOutput(size_t, Tensor) override { return Status(StatusCode::kInternal, "unused"); }
  int num_threads() const override { return 1; }

 private:
  std::vector<const Tensor*> inputs_;
  std::vector<float>& out_;
  Tensor y_;
};

TEST(ConcatTest, InputsAlreadyInTheOutputAreKeptAndMisplacedOnesRefused) {
  const NodeSpec spec("Concat", 13);
  AttrBuilder attrs;
  attrs.Int("axis", 1);
  NodeInfo info;
  info.name = "concat";
  info.op_type = spec.op_type;
  info.opset = spec.opset;
  info.attrs = &attrs.attrs();
  info.inputs.resize(3);
  info.outputs.resize(1);
  auto kernel = KernelRegistry::Global().Create(info);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();

  // [1,2] and [1,4] written in place, [1,3] copied in after them.
  std::vector<float> slot(9, -1.0f);
  std::iota(slot.begin(), slot.begin() + 6, 1.0f);
  Tensor a = Tensor::View(DataType::kFloat32, {1, 2}, slot.data(), nullptr);
  Tensor b = Tensor::View(DataType::kFloat32, {1, 4}, slot.data() + 2, nullptr);
  Tensor c = FloatTensor({1, 3}, {7, 8, 9});
  SlotContext in_place({&a, &b, &c}, slot);
  Status s = (*kernel)->Run(in_place);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(slot, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9}));

  // The last input inside the output, one element before its place: copying the others would
  // overwrite it before it is read.
  Tensor b_late = Tensor::View(DataType::kFloat32, {1, 4}, slot.data() + 4, nullptr);
  Tensor a_copy = FloatTensor({1, 2}, {1, 2});
  Tensor c_short = FloatTensor({1, 3}, {7, 8, 9});
  SlotContext misplaced({&a_copy, &c_short, &b_late}, slot);
  ExpectError((*kernel)->Run(misplaced), StatusCode::kInvalidArgument,
              "input 2 shares memory with the output but is not at its place in it");
}

TEST(SqueezeUnsqueezeTest, AttributeAndInputForms) {
  Tensor x = CountFromOne({1, 3, 1, 2});
  const auto data = AsDoubles(x);
  AttrBuilder none;
  auto all = RunOne(NodeSpec("Squeeze", 13), none, {&x});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ExpectClose(*all, {3, 2}, data, 0, 0, "Squeeze all");
  Tensor axes = Int64Tensor({1}, {-2});
  auto one = RunOne(NodeSpec("Squeeze", 13), none, {&x, &axes});
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ExpectClose(*one, {1, 3, 2}, data, 0, 0, "Squeeze input axes");
  AttrBuilder attr_axes;
  attr_axes.Ints("axes", {0});
  auto old = RunOne(NodeSpec("Squeeze", 11), attr_axes, {&x});
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  ExpectClose(*old, {3, 1, 2}, data, 0, 0, "Squeeze-11 attribute axes");
  AttrBuilder not_one;
  not_one.Ints("axes", {1});
  ExpectError(RunOne(NodeSpec("Squeeze", 11), not_one, {&x}).status(), StatusCode::kInvalidArgument,
              "cannot squeeze axis 1 of shape [1,3,1,2]: it is not 1");

  Tensor y = CountFromOne({3, 2});
  Tensor un_axes = Int64Tensor({2}, {0, -1});
  auto u = RunOne(NodeSpec("Unsqueeze", 13), none, {&y, &un_axes});
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  ExpectClose(*u, {1, 3, 2, 1}, AsDoubles(y), 0, 0, "Unsqueeze-13");
  AttrBuilder u_attr;
  u_attr.Ints("axes", {1, 3});
  auto u11 = RunOne(NodeSpec("Unsqueeze", 11), u_attr, {&y});
  ASSERT_TRUE(u11.ok()) << u11.status().ToString();
  ExpectClose(*u11, {3, 1, 2, 1}, AsDoubles(y), 0, 0, "Unsqueeze-11");
  Tensor dup = Int64Tensor({2}, {1, -3});
  ExpectError(RunOne(NodeSpec("Unsqueeze", 13), none, {&y, &dup}).status(),
              StatusCode::kInvalidArgument, "axis -3 is given twice");
  ExpectError(RunOne(NodeSpec("Unsqueeze", 13), none, {&y}).status(), StatusCode::kInvalidArgument,
              "required input axes is missing");
}

TEST(ShapeTest, StartAndEnd) {
  Tensor x = CountFromOne({2, 3, 4, 5});
  AttrBuilder none;
  auto all = RunOne(NodeSpec("Shape", 13), none, {&x});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(Int64sOf(*all), (std::vector<int64_t>{2, 3, 4, 5}));
  AttrBuilder slice;
  slice.Int("start", 1).Int("end", -1);
  auto mid = RunOne(NodeSpec("Shape", 15), slice, {&x});
  ASSERT_TRUE(mid.ok()) << mid.status().ToString();
  EXPECT_EQ(Int64sOf(*mid), (std::vector<int64_t>{3, 4}));
  AttrBuilder clamped;
  clamped.Int("start", -10).Int("end", 10);
  auto wide = RunOne(NodeSpec("Shape", 15), clamped, {&x});
  ASSERT_TRUE(wide.ok()) << wide.status().ToString();
  EXPECT_EQ(Int64sOf(*wide), (std::vector<int64_t>{2, 3, 4, 5}));
  AttrBuilder empty;
  empty.Int("start", 3).Int("end", 1);
  auto none_left = RunOne(NodeSpec("Shape", 15), empty, {&x});
  ASSERT_TRUE(none_left.ok()) << none_left.status().ToString();
  EXPECT_EQ(none_left->shape(), (std::vector<int64_t>{0}));
}

// Size runs when its input's shape is known only at run time (the compiler folds the rest).
TEST(SizeTest, CountsElementsOfAnyShape) {
  NodeSpec spec("Size", 13);
  spec.describe_inputs = false;
  AttrBuilder none;
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 3, 4}, std::vector<int64_t>{}, std::vector<int64_t>{5, 0, 2}}) {
    Tensor x = CountFromOne(shape);
    auto y = RunOne(spec, none, {&x});
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_TRUE(y->shape().empty());
    EXPECT_EQ(Int64sOf(*y), (std::vector<int64_t>{Count(shape)}));
  }
  Tensor ints = Int64Tensor({7}, std::vector<int64_t>(7, 1));
  auto y = RunOne(NodeSpec("Size", 1), none, {&ints});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(Int64sOf(*y), (std::vector<int64_t>{7}));
}

TEST(GatherTest, AxesIndexTypesAndNegativeIndices) {
  std::mt19937 rng(62);
  for (int t = 0; t < 60; ++t) {
    const size_t rank = static_cast<size_t>(Pick(rng, 1, 4));
    std::vector<int64_t> shape;
    for (size_t d = 0; d < rank; ++d) shape.push_back(Pick(rng, 1, 5));
    const int64_t axis = Pick(rng, -static_cast<int64_t>(rank), static_cast<int64_t>(rank) - 1);
    const size_t a = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
    std::vector<int64_t> ishape;
    for (int64_t d = Pick(rng, 0, 2); d > 0; --d) ishape.push_back(Pick(rng, 1, 3));
    std::vector<int64_t> idx(static_cast<size_t>(Count(ishape)));
    for (int64_t& i : idx) i = Pick(rng, -shape[a], shape[a] - 1);
    Tensor data = CountFromOne(shape);
    Tensor indices = Int64Tensor(ishape, idx);
    std::vector<int32_t> idx32(idx.begin(), idx.end());
    Tensor indices32 = MakeTensor(DataType::kInt32, ishape, idx32.data());
    AttrBuilder attrs;
    attrs.Int("axis", axis);
    const int64_t outer = Count({shape.begin(), shape.begin() + static_cast<int64_t>(a)});
    const int64_t inner = Count({shape.begin() + static_cast<int64_t>(a) + 1, shape.end()});
    std::vector<double> ref;
    const auto dv = FloatsOf(data);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i : idx) {
        const int64_t row = i < 0 ? i + shape[a] : i;
        for (int64_t k = 0; k < inner; ++k) {
          ref.push_back(dv[static_cast<size_t>((o * shape[a] + row) * inner + k)]);
        }
      }
    }
    std::vector<int64_t> out(shape.begin(), shape.begin() + static_cast<int64_t>(a));
    out.insert(out.end(), ishape.begin(), ishape.end());
    out.insert(out.end(), shape.begin() + static_cast<int64_t>(a) + 1, shape.end());
    for (const Tensor* ind : {&indices, &indices32}) {
      auto r = RunOne(NodeSpec("Gather", 13), attrs, {&data, ind});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ExpectClose(*r, out, ref, 0, 0,
                  "Gather " + ShapeToString(shape) + " axis " + std::to_string(axis));
    }
  }
  Tensor data = CountFromOne({3, 2});
  Tensor bad = Int64Tensor({2}, {0, 3});
  AttrBuilder none;
  ExpectError(RunOne(NodeSpec("Gather", 13), none, {&data, &bad}).status(),
              StatusCode::kInvalidArgument, "index 3 is out of range for a dim of 3");
}

TEST(RegistryTest, OpsetsOutsideTheRegisteredRangesAreUnsupported) {
  AttrBuilder none;
  Tensor x = CountFromOne({2});
  // Reshape before opset 5 took the shape as an attribute and is not implemented.
  ExpectError(RunOne(NodeSpec("Reshape", 4), none, {&x}).status(), StatusCode::kUnsupported,
              "operator Reshape (opset 4) is not supported");
}

}  // namespace
}  // namespace epctx::exec::testing
