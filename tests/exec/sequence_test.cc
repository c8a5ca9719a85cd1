// Sequence and optional values: the sequence ops worked by hand (positions from both ends, the
// split forms of SplitToSequence, ConcatFromSequence with and without a new axis), their messages
// for positions out of range, the registry refusing a sequence where a kernel takes only tensors,
// and Tensor::Clone copying sequences and string tensors deeply.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

Tensor Seq(std::vector<Tensor> elements) {
  return Tensor::Sequence(DataType::kFloat32, std::move(elements));
}

Tensor RunOne(const std::string& op, const AttrBuilder& attrs,
              const std::vector<const Tensor*>& inputs) {
  auto r = RunNode(NodeSpec(op), attrs, inputs);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok() || r->empty()) return Tensor();
  return (*r)[0];
}

TEST(SequenceOps, ConstructInsertEraseAtAndLength) {
  Tensor a = FloatTensor({2}, {1, 2});
  Tensor b = FloatTensor({1}, {3});
  Tensor c = FloatTensor({3}, {4, 5, 6});
  Tensor seq = RunOne("SequenceConstruct", {}, {&a, &b});
  ASSERT_EQ(seq.kind(), ValueKind::kSequence);
  ASSERT_EQ(seq.elements().size(), 2u);
  EXPECT_EQ(seq.dtype(), DataType::kFloat32);

  Tensor front = Int64Tensor({}, {-2});  // -2 of 2: before the first
  Tensor inserted = RunOne("SequenceInsert", {}, {&seq, &c, &front});
  ASSERT_EQ(inserted.elements().size(), 3u);
  EXPECT_EQ(FloatsOf(inserted.elements()[0]), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(FloatsOf(inserted.elements()[2]), (std::vector<float>{3}));
  // The input sequence is unchanged: values are immutable.
  EXPECT_EQ(seq.elements().size(), 2u);

  Tensor last = Int64Tensor({}, {-1});
  EXPECT_EQ(FloatsOf(RunOne("SequenceAt", {}, {&inserted, &last})), (std::vector<float>{3}));
  Tensor erased = RunOne("SequenceErase", {}, {&inserted, nullptr});  // default: the last
  ASSERT_EQ(erased.elements().size(), 2u);
  EXPECT_EQ(FloatsOf(erased.elements()[1]), (std::vector<float>{1, 2}));
  EXPECT_EQ(Int64sOf(RunOne("SequenceLength", {}, {&erased})), (std::vector<int64_t>{2}));
}

TEST(SequenceOps, PositionsOutsideTheSequenceAreRefused) {
  Tensor a = FloatTensor({1}, {1});
  Tensor seq = Seq({a});
  Tensor two = Int64Tensor({}, {2});
  auto at = RunNode(NodeSpec("SequenceAt"), {}, {&seq, &two});
  ExpectError(at.status(), StatusCode::kInvalidArgument,
              "position 2 is outside [-1, 0] for a sequence of 1");
  // Insert may also append: position == length is allowed, beyond is not.
  Tensor one = Int64Tensor({}, {1});
  EXPECT_TRUE(RunNode(NodeSpec("SequenceInsert"), {}, {&seq, &a, &one}).ok());
  auto insert = RunNode(NodeSpec("SequenceInsert"), {}, {&seq, &a, &two});
  ExpectError(insert.status(), StatusCode::kInvalidArgument,
              "position 2 is outside [-1, 1] for a sequence of 1");
  Tensor empty = Seq({});
  auto erase = RunNode(NodeSpec("SequenceErase"), {}, {&empty, nullptr});
  ExpectError(erase.status(), StatusCode::kInvalidArgument, "cannot erase from an empty sequence");
  Tensor ints = Int64Tensor({1}, {7});
  auto mixed = RunNode(NodeSpec("SequenceInsert"), {}, {&seq, &ints, nullptr});
  ExpectError(mixed.status(), StatusCode::kInvalidArgument,
              "tensor of int64 cannot join a sequence of float32");
}

TEST(SequenceOps, SplitToSequenceForms) {
  Tensor x = FloatTensor({2, 3}, {1, 2, 3, 4, 5, 6});
  // No split: pieces of 1 along the axis, squeezed with keepdims=0.
  AttrBuilder squeeze;
  squeeze.Int("axis", 1).Int("keepdims", 0);
  Tensor cols = RunOne("SplitToSequence", squeeze, {&x, nullptr});
  ASSERT_EQ(cols.elements().size(), 3u);
  EXPECT_EQ(cols.elements()[2].shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(FloatsOf(cols.elements()[2]), (std::vector<float>{3, 6}));
  // A scalar split: equal pieces, the last shorter.
  AttrBuilder axis1;
  axis1.Int("axis", 1);
  Tensor two = Int64Tensor({}, {2});
  Tensor pieces = RunOne("SplitToSequence", axis1, {&x, &two});
  ASSERT_EQ(pieces.elements().size(), 2u);
  EXPECT_EQ(FloatsOf(pieces.elements()[0]), (std::vector<float>{1, 2, 4, 5}));
  EXPECT_EQ(pieces.elements()[1].shape(), (std::vector<int64_t>{2, 1}));
  // Sizes that do not add up to the axis are refused.
  Tensor sizes = Int64Tensor({2}, {1, 1});
  auto bad = RunNode(NodeSpec("SplitToSequence"), axis1, {&x, &sizes});
  ExpectError(bad.status(), StatusCode::kInvalidArgument, "split sums to 2, axis 1 has 3");
}

TEST(SequenceOps, ConcatFromSequenceConcatenatesOrStacks) {
  Tensor a = FloatTensor({1, 2}, {1, 2});
  Tensor b = FloatTensor({1, 2}, {3, 4});
  Tensor seq = Seq({a, b});
  AttrBuilder axis1;
  axis1.Int("axis", 1);
  Tensor joined = RunOne("ConcatFromSequence", axis1, {&seq});
  EXPECT_EQ(joined.shape(), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(FloatsOf(joined), (std::vector<float>{1, 2, 3, 4}));
  AttrBuilder stack;
  stack.Int("axis", -1).Int("new_axis", 1);
  Tensor stacked = RunOne("ConcatFromSequence", stack, {&seq});
  EXPECT_EQ(stacked.shape(), (std::vector<int64_t>{1, 2, 2}));
  EXPECT_EQ(FloatsOf(stacked), (std::vector<float>{1, 3, 2, 4}));
}

TEST(OptionalOps, HasElementAndGetElement) {
  Tensor none = Tensor::None(DataType::kFloat32);
  Tensor a = FloatTensor({1}, {5});
  EXPECT_EQ(*RunOne("OptionalHasElement", {}, {&none}).data_as<bool>(), false);
  EXPECT_EQ(*RunOne("OptionalHasElement", {}, {&a}).data_as<bool>(), true);
  EXPECT_EQ(FloatsOf(RunOne("OptionalGetElement", {}, {&a})), (std::vector<float>{5}));
  auto empty = RunNode(NodeSpec("OptionalGetElement"), {}, {&none});
  ExpectError(empty.status(), StatusCode::kInvalidArgument, "the optional input holds no value");
}

TEST(ValueKinds, RegistryRefusesASequenceWhereAKernelTakesOnlyTensors) {
  Tensor a = FloatTensor({1}, {1});
  Tensor seq = Seq({a});
  auto r = RunNode(NodeSpec("Relu"), {}, {&seq});
  ExpectError(r.status(), StatusCode::kUnsupported,
              "Relu node 'n': input 0 is a sequence value, which Relu does not take");
  Tensor text = Tensor::Allocate(DataType::kString, {1}).value();
  auto s = RunNode(NodeSpec("Neg"), {}, {&text});
  ExpectError(s.status(), StatusCode::kUnsupported,
              "Neg node 'n': input 0 is a string value, which Neg does not take");
}

TEST(ValueKinds, CloneCopiesStringsAndSequencesDeeply) {
  Tensor text = Tensor::Allocate(DataType::kString, {2}).value();
  text.mutable_data_as<std::string>()[0] = "a";
  text.mutable_data_as<std::string>()[1] = "bc";
  Tensor seq = Tensor::Sequence(DataType::kString, {text});
  Tensor copy = seq.Clone().value();
  text.mutable_data_as<std::string>()[1] = "changed";
  ASSERT_EQ(copy.elements().size(), 1u);
  EXPECT_EQ(copy.elements()[0].data_as<std::string>()[1], "bc");
  EXPECT_EQ(copy.dtype(), DataType::kString);
  EXPECT_EQ(Tensor::None(DataType::kInt64).Clone().value().kind(), ValueKind::kNone);
}

TEST(ValueKinds, IdentityPassesStringsThrough) {
  Tensor text = Tensor::Allocate(DataType::kString, {2}).value();
  text.mutable_data_as<std::string>()[0] = "x";
  text.mutable_data_as<std::string>()[1] = "yz";
  Tensor out = RunOne("Identity", {}, {&text});
  ASSERT_EQ(out.dtype(), DataType::kString);
  EXPECT_EQ(out.data_as<std::string>()[1], "yz");
  AttrBuilder shape;
  Tensor target = Int64Tensor({2}, {1, 2});
  Tensor reshaped = RunOne("Reshape", shape, {&text, &target});
  EXPECT_EQ(reshaped.shape(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(reshaped.data_as<std::string>()[0], "x");
}

TEST(StringConstant, MakesItsStringsAndRefusesAShapeThatDoesNotHoldThem) {
  AttrBuilder ok;
  ok.Strings("value", {"a", "bc"}).Ints("shape", {2, 1});
  auto r = RunNode(NodeSpec("StringConstant", 1, "com.epctx"), ok, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(StringsOf((*r)[0]), (std::vector<std::string>{"a", "bc"}));
  // A forged shape (the blob fuzzer's: billions of elements) is refused before any allocation.
  AttrBuilder huge;
  huge.Strings("value", {"a", "bc"}).Ints("shape", {1 << 20, 1 << 20});
  ExpectError(RunNode(NodeSpec("StringConstant", 1, "com.epctx"), huge, {}).status(),
              StatusCode::kInvalidArgument,
              "2 strings for shape [1048576,1048576], which holds 1099511627776");
}

}  // namespace
}  // namespace epctx::exec::testing
