// The kernels of the operators opset 18 added (Mish, Bitwise*, GroupNormalization,
// CenterCropPad, Col2Im) on cases ONNX Runtime's comparison (tests/ops/opset18_models.json)
// cannot reach: element types it takes no inputs of, exact small examples, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernel_test_helpers.h"

namespace epctx::exec::testing {
namespace {

TEST(MishTest, XTimesTanhOfSoftplus) {
  const std::vector<float> xv = {-100, -20, -3, -0.5f, 0, 0.5f, 3, 20, 89, 100};
  Tensor x = FloatTensor({10}, xv);
  auto r = RunNode(NodeSpec("Mish", 18), AttrBuilder(), {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<double> y;
  for (float v : xv) y.push_back(v * std::tanh(std::log1p(std::exp(double{v}))));
  ExpectClose((*r)[0], {10}, y, 1e-6, 1e-6, "Mish");
}

TEST(BitwiseTest, EveryIntegerWidth) {
  Tensor a = Typed<int8_t>(DataType::kInt8, {4}, {-128, -1, 85, 15});
  Tensor b = Typed<int8_t>(DataType::kInt8, {1}, {-86});
  auto r = RunNode(NodeSpec("BitwiseAnd", 18), AttrBuilder(), {&a, &b});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ValuesOf<int8_t>((*r)[0]), (std::vector<int8_t>{-128, -86, 0, 10}));
  r = RunNode(NodeSpec("BitwiseXor", 18), AttrBuilder(), {&a, &b});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ValuesOf<int8_t>((*r)[0]), (std::vector<int8_t>{42, 85, -1, -91}));
  Tensor u = Typed<uint16_t>(DataType::kUint16, {3}, {0, 1, 0xF0F0});
  r = RunNode(NodeSpec("BitwiseNot", 18), AttrBuilder(), {&u});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ValuesOf<uint16_t>((*r)[0]), (std::vector<uint16_t>{0xFFFF, 0xFFFE, 0x0F0F}));
  Tensor w = Typed<uint64_t>(DataType::kUint64, {2}, {1ull << 63, 5});
  Tensor v = Typed<uint64_t>(DataType::kUint64, {2}, {1, 2});
  r = RunNode(NodeSpec("BitwiseOr", 18), AttrBuilder(), {&w, &v});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ValuesOf<uint64_t>((*r)[0]), (std::vector<uint64_t>{(1ull << 63) | 1, 7}));
  Tensor f = FloatTensor({1}, {1.0f});
  EXPECT_EQ(RunNode(NodeSpec("BitwiseNot", 18), AttrBuilder(), {&f}).status().code(),
            StatusCode::kUnsupported);
}

TEST(GroupNormTest, EachGroupOfChannelsOfEachSample) {
  std::mt19937 rng(18);
  const std::vector<int64_t> shape{2, 6, 3, 2};
  Tensor x = RandomFloats(shape, rng, -2, 5);
  Tensor scale = RandomFloats({3}, rng);
  Tensor bias = RandomFloats({3}, rng);
  const auto xv = FloatsOf(x), sv = FloatsOf(scale), bv = FloatsOf(bias);
  AttrBuilder attrs;
  attrs.Int("num_groups", 3).Float("epsilon", 1e-3f);
  NodeSpec spec("GroupNormalization", 18);
  spec.threads = 2;
  auto r = RunNode(spec, attrs, {&x, &scale, &bias});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // A group: 2 channels of 3x2, 12 consecutive elements; groups of both samples in turn.
  std::vector<double> y;
  for (int64_t g = 0; g < 6; ++g) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < 12; ++i) m += xv[g * 12 + i];
    m /= 12;
    for (int64_t i = 0; i < 12; ++i) v += (xv[g * 12 + i] - m) * (xv[g * 12 + i] - m);
    v /= 12;
    for (int64_t i = 0; i < 12; ++i) {
      y.push_back((xv[g * 12 + i] - m) / std::sqrt(v + 1e-3) * sv[g % 3] + bv[g % 3]);
    }
  }
  ExpectClose((*r)[0], shape, y, 1e-5, 1e-4, "GroupNormalization");

  Tensor per_channel = RandomFloats({6}, rng);
  ExpectError(RunNode(spec, attrs, {&x, &per_channel, &bias}).status(),
              StatusCode::kInvalidArgument,
              "input scale has shape [6], expected [3] (one value per group, in opset 18)");
  AttrBuilder four;
  four.Int("num_groups", 4);
  Tensor scale4 = RandomFloats({4}, rng), bias4 = RandomFloats({4}, rng);
  ExpectError(RunNode(spec, four, {&x, &scale4, &bias4}).status(), StatusCode::kInvalidArgument,
              "X has 6 channels, which do not divide into num_groups = 4 groups");
  AttrBuilder none;
  ExpectError(RunNode(spec, none, {&x, &scale, &bias}).status(), StatusCode::kInvalidArgument,
              "num_groups is 0, expected a positive count");
}

TEST(GroupNormTest, ScaleAndBiasPerChannelFromOpset21) {
  std::mt19937 rng(21);
  const std::vector<int64_t> shape{1, 4, 5};
  Tensor x = RandomFloats(shape, rng, -3, 3);
  Tensor scale = RandomFloats({4}, rng);
  Tensor bias = RandomFloats({4}, rng);
  const auto xv = FloatsOf(x), sv = FloatsOf(scale), bv = FloatsOf(bias);
  AttrBuilder attrs;
  attrs.Int("num_groups", 2);
  auto r = RunNode(NodeSpec("GroupNormalization", 21), attrs, {&x, &scale, &bias});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<double> y;
  for (int64_t g = 0; g < 2; ++g) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < 10; ++i) m += xv[g * 10 + i];
    m /= 10;
    for (int64_t i = 0; i < 10; ++i) v += (xv[g * 10 + i] - m) * (xv[g * 10 + i] - m);
    v /= 10;
    for (int64_t i = 0; i < 10; ++i) {
      const int64_t c = g * 2 + i / 5;
      y.push_back((xv[g * 10 + i] - m) / std::sqrt(v + 1e-5) * sv[c] + bv[c]);
    }
  }
  ExpectClose((*r)[0], shape, y, 1e-5, 1e-4, "GroupNormalization-21");
  Tensor per_group = RandomFloats({2}, rng);
  ExpectError(RunNode(NodeSpec("GroupNormalization", 21), attrs, {&x, &per_group, &bias}).status(),
              StatusCode::kInvalidArgument,
              "input scale has shape [2], expected [4] (one value per channel, from opset 21)");
}

TEST(CenterCropPadTest, CropsAndPadsAroundTheCenter) {
  std::vector<int64_t> values(3 * 6);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>(i);
  Tensor x = Int64Tensor({3, 6}, values);
  // Rows 3 -> 6: one zero row before, two after; columns 6 -> 3: drop 1 before, 2 after.
  Tensor shape = Int32Tensor({2}, {6, 3});
  auto r = RunNode(NodeSpec("CenterCropPad", 18), AttrBuilder(), {&x, &shape});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{6, 3}));
  EXPECT_EQ(Int64sOf((*r)[0]),
            (std::vector<int64_t>{0, 0, 0, 1, 2, 3, 7, 8, 9, 13, 14, 15, 0, 0, 0, 0, 0, 0}));

  AttrBuilder last;
  last.Ints("axes", {-1});
  Tensor five = Int64Tensor({1}, {5});
  r = RunNode(NodeSpec("CenterCropPad", 18), last, {&x, &five});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Int64sOf((*r)[0]),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16}));

  Tensor three = Int64Tensor({3}, {1, 2, 3});
  ExpectError(RunNode(NodeSpec("CenterCropPad", 18), AttrBuilder(), {&x, &three}).status(),
              StatusCode::kInvalidArgument, "shape has 3 elements for 2 axes");
  Tensor negative = Int64Tensor({2}, {2, -1});
  ExpectError(RunNode(NodeSpec("CenterCropPad", 18), AttrBuilder(), {&x, &negative}).status(),
              StatusCode::kInvalidArgument, "shape[1] is -1, expected >= 0");
  AttrBuilder twice;
  twice.Ints("axes", {1, -1});
  Tensor two = Int64Tensor({2}, {2, 2});
  ExpectError(RunNode(NodeSpec("CenterCropPad", 18), twice, {&x, &two}).status(),
              StatusCode::kInvalidArgument, "axes names axis 1 twice");
}

TEST(Col2ImTest, OverlappingBlocksSum) {
  // One channel, 2x2 blocks over a 3x3 image: 4 taps x 4 positions, all ones; each image
  // element gets as many ones as blocks cover it.
  Tensor cols = FloatTensor({1, 4, 4}, std::vector<float>(16, 1.0f));
  Tensor image = Int64Tensor({2}, {3, 3});
  Tensor block = Int64Tensor({2}, {2, 2});
  auto r = RunNode(NodeSpec("Col2Im", 18), AttrBuilder(), {&cols, &image, &block});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_EQ(FloatsOf((*r)[0]), (std::vector<float>{1, 2, 1, 2, 4, 2, 1, 2, 1}));

  Tensor short_cols = FloatTensor({1, 4, 3}, std::vector<float>(12, 1.0f));
  ExpectError(
      RunNode(NodeSpec("Col2Im", 18), AttrBuilder(), {&short_cols, &image, &block}).status(),
      StatusCode::kInvalidArgument,
      "input has shape [1,4,3], expected [N, C * 4, 4] (the block's 4 taps, and the 4 "
      "positions the block takes over the padded image)");
  Tensor block3 = Int64Tensor({3}, {2, 2, 1});
  ExpectError(RunNode(NodeSpec("Col2Im", 18), AttrBuilder(), {&cols, &image, &block3}).status(),
              StatusCode::kInvalidArgument,
              "image_shape has 2 dims and block_shape 3: expected the same count, 1 to 3");
}

}  // namespace
}  // namespace epctx::exec::testing
