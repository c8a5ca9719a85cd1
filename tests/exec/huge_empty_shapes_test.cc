// Empty tensors whose other dims are huge ([0, 2^32, 2^32] holds no element and takes no byte):
// a product of dims that does not fit int64 is an error naming the dims in every kernel family,
// never a wrapped value (Flatten gave [0, 0], Concat [0, 0], SpaceToDepth [0, 0, 1, 1]); a
// product with a 0 in it is 0, so shapes whose products fit keep their exact answers.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernel_test_helpers.h"
#include "util/overflow.h"

namespace epctx::exec::testing {
namespace {

constexpr int64_t k2p32 = int64_t{1} << 32;
constexpr int64_t k2p62 = int64_t{1} << 62;
const std::string kOverflow = "the product of dims [4294967296,4294967296] overflows int64";

Tensor HugeEmptyTensor(std::vector<int64_t> shape, DataType type = DataType::kFloat32) {
  auto t = Tensor::Allocate(type, std::move(shape));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->byte_size(), 0u);
  return std::move(t).value();
}

TEST(CheckedDimProduct, ExactWhateverTheOrderAndAnErrorBeyondInt64) {
  for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{
           {0, k2p32, k2p32}, {k2p32, k2p32, 0}, {k2p32, 0, k2p32}, {k2p62, 4, 0}}) {
    auto p = CheckedDimProduct(dims);
    ASSERT_TRUE(p.ok()) << ShapeToString(dims) << ": " << p.status().ToString();
    EXPECT_EQ(*p, 0) << ShapeToString(dims);
  }
  EXPECT_EQ(*CheckedDimProduct(std::vector<int64_t>{k2p32, k2p32 / 2 - 1}),
            k2p32 * (k2p32 / 2 - 1));
  ExpectError(CheckedDimProduct(std::vector<int64_t>{k2p32, k2p32}).status(),
              StatusCode::kInvalidArgument, kOverflow);
  ExpectError(CheckedDimProduct(std::vector<int64_t>{3, k2p62}).status(),
              StatusCode::kInvalidArgument,
              "the product of dims [3,4611686018427387904] overflows int64");
  ExpectError(CheckedDimProduct(std::vector<int64_t>{2, -1}).status(), StatusCode::kInvalidArgument,
              "negative dimension -1");
  // A tensor's element count is exact too: [2^32, 2^32, 0] is an empty tensor, not an overflow.
  EXPECT_EQ(HugeEmptyTensor({k2p32, k2p32, 0}).element_count(), 0);
}

// Tensor family: the products are the output's dims.
TEST(HugeEmptyShapes, FlattenRefusesADimBeyondInt64AndKeepsExactOnes) {
  Tensor x = HugeEmptyTensor({0, k2p32, k2p32});
  AttrBuilder axis1;
  axis1.Int("axis", 1);
  ExpectError(RunNode(NodeSpec("Flatten", 13), axis1, {&x}).status(), StatusCode::kInvalidArgument,
              kOverflow);
  AttrBuilder axis2;
  axis2.Int("axis", 2);
  auto r = RunNode(NodeSpec("Flatten", 13), axis2, {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{0, k2p32}));
  Tensor x3 = HugeEmptyTensor({0, 3, k2p62});
  ExpectError(RunNode(NodeSpec("Flatten", 13), axis1, {&x3}).status(), StatusCode::kInvalidArgument,
              "the product of dims [3,4611686018427387904] overflows int64");
}

TEST(HugeEmptyShapes, ConcatRefusesAnAxisThatAddsUpBeyondInt64) {
  Tensor x = HugeEmptyTensor({0, k2p62});
  AttrBuilder axis1;
  axis1.Int("axis", 1);
  // Four of them added up to 2^64, which wrapped to 0.
  for (size_t n : {2, 4}) {
    ExpectError(RunNode(NodeSpec("Concat", 13), axis1, std::vector<const Tensor*>(n, &x)).status(),
                StatusCode::kInvalidArgument, "the inputs' dims on axis 1 add up beyond int64");
  }
  Tensor half = HugeEmptyTensor({0, k2p62 / 2});
  auto r = RunNode(NodeSpec("Concat", 13), axis1, {&half, &half});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{0, k2p62}));
}

// Image family: SpaceToDepth's channels are channels * blocksize^2.
TEST(HugeEmptyShapes, SpaceToDepthRefusesChannelsBeyondInt64) {
  Tensor x = HugeEmptyTensor({0, int64_t{1} << 48, 1 << 16, 1 << 16});
  AttrBuilder block;
  block.Int("blocksize", 1 << 16);
  ExpectError(RunNode(NodeSpec("SpaceToDepth", 13), block, {&x}).status(),
              StatusCode::kInvalidArgument,
              "the product of dims [281474976710656,65536,65536] overflows int64");
  Tensor y = HugeEmptyTensor({0, 4, k2p62, 1});
  AttrBuilder two;
  two.Int("blocksize", 2);
  ExpectError(RunNode(NodeSpec("DepthToSpace", 13), two, {&y}).status(),
              StatusCode::kInvalidArgument,
              "the product of dims [4611686018427387904,2] overflows int64");
}

// Reduce family: the reduced dims' product.
TEST(HugeEmptyShapes, ReduceSumAndCumSumRefuseProductsBeyondInt64) {
  Tensor x = HugeEmptyTensor({0, k2p32, k2p32});
  Tensor axes = Int64Tensor({2}, {1, 2});
  AttrBuilder none;
  ExpectError(RunNode(NodeSpec("ReduceSum", 13), none, {&x, &axes}).status(),
              StatusCode::kInvalidArgument, kOverflow);
  Tensor axis0 = Int64Tensor({}, {0});
  ExpectError(RunNode(NodeSpec("CumSum", 14), none, {&x, &axis0}).status(),
              StatusCode::kInvalidArgument, kOverflow);
  // Products with the 0 in them are 0: reducing axis 1 of [0, 2^32, 3] is an empty [0, 1, 3].
  Tensor small = HugeEmptyTensor({0, k2p32, 3});
  Tensor axis1 = Int64Tensor({1}, {1});
  auto r = RunNode(NodeSpec("ReduceSum", 13), none, {&small, &axis1});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{0, 1, 3}));
}

// Normalization family: the rows and the row length of Softmax (opset 11 flattens at `axis`)
// and LayerNormalization.
TEST(HugeEmptyShapes, SoftmaxAndLayerNormRefuseRowsBeyondInt64) {
  Tensor x = HugeEmptyTensor({0, k2p32, k2p32});
  AttrBuilder axis1;
  axis1.Int("axis", 1);
  ExpectError(RunNode(NodeSpec("Softmax", 11), axis1, {&x}).status(), StatusCode::kInvalidArgument,
              kOverflow);
  Tensor scale = FloatTensor({1}, {1});
  ExpectError(RunNode(NodeSpec("LayerNormalization", 17), axis1, {&x, &scale}).status(),
              StatusCode::kInvalidArgument, kOverflow);
}

// Neural-network family: MatMul's batches, GlobalAveragePool's plane size.
TEST(HugeEmptyShapes, MatMulAndGlobalPoolRefuseProductsBeyondInt64) {
  Tensor a = HugeEmptyTensor({k2p32, k2p32, 0, 4});
  Tensor b = FloatTensor({4, 1}, {1, 2, 3, 4});
  AttrBuilder none;
  ExpectError(RunNode(NodeSpec("MatMul", 13), none, {&a, &b}).status(),
              StatusCode::kInvalidArgument, kOverflow);
  Tensor x = HugeEmptyTensor({0, 1, k2p32, k2p32});
  ExpectError(RunNode(NodeSpec("GlobalAveragePool", 1), none, {&x}).status(),
              StatusCode::kInvalidArgument, kOverflow);
}

// Indexing family: Split's rows; SplitToSequence's sizes, whose sum wrapped to the axis extent.
TEST(HugeEmptyShapes, SplitsRefuseProductsAndSizesBeyondInt64) {
  Tensor x = HugeEmptyTensor({0, k2p32, k2p32});
  AttrBuilder axis1;
  axis1.Int("axis", 1);
  NodeSpec split("Split", 18);
  split.outputs = 2;
  AttrBuilder two;
  two.Int("axis", 1).Int("num_outputs", 2);
  ExpectError(RunNode(split, two, {&x}).status(), StatusCode::kInvalidArgument, kOverflow);

  Tensor flat = HugeEmptyTensor({0, 0});
  Tensor sizes = Int64Tensor({4}, {k2p62, k2p62, k2p62, k2p62});
  ExpectError(RunNode(NodeSpec("SplitToSequence", 11), axis1, {&flat, &sizes}).status(),
              StatusCode::kInvalidArgument, "split's sizes add up beyond int64");
}

// Broadcasting (element-wise family): an empty output iterates nothing, whatever its other dims.
TEST(HugeEmptyShapes, ElementwiseOpsOnEmptyOutputsStayExact) {
  Tensor x = HugeEmptyTensor({0, k2p32, k2p32});
  Tensor one = FloatTensor({1}, {1});
  AttrBuilder none;
  auto sum = RunNode(NodeSpec("Add", 14), none, {&x, &one});
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ((*sum)[0].shape(), x.shape());
  Tensor c = HugeEmptyTensor({0, k2p32, k2p32}, DataType::kBool);
  auto where = RunNode(NodeSpec("Where", 16), none, {&c, &x, &one});
  ASSERT_TRUE(where.ok()) << where.status().ToString();
  EXPECT_EQ((*where)[0].shape(), x.shape());
}

}  // namespace
}  // namespace epctx::exec::testing
