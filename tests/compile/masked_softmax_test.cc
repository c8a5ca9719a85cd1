// Attention's scale, mask and Softmax become one com.epctx MaskedSoftmax (FuseMaskedSoftmax):
// the optimised graph must compute what the unoptimised one does, on the patterns BERT and GPT-2
// exports contain, and chains the fused node cannot reproduce must stay as they are.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compile/dnnl_graph_helpers.h"
#include "compile/passes/passes.h"

namespace epctx::testing::dnnl {
namespace {

constexpr double kSoftmaxRel = 1e-6;
constexpr int64_t kHeads = 3, kSeq = 9, kHeadSize = 8;

// Q·Kᵀ of two [1, heads, seq, head size] inputs.
std::string Scores(ModelBuilder& b, const std::string& q, const std::string& k) {
  return b.Node("MatMul", {q, b.Node("Transpose", {k}, {AttrInts("perm", {0, 1, 3, 2})})});
}

// Optimises the graph, checks it against the unoptimised one on `inputs`, and returns it.
compile::IrGraph OptimiseAndCompareTightly(const ModelBuilder& b, const std::vector<Tensor>& inputs,
                                           const std::string& what) {
  return OptimiseAndCompareWithin(b, inputs, kSoftmaxRel, what);
}

// The graph's last node is the one MaskedSoftmax, with these attributes.
void ExpectEndsInMaskedSoftmax(const compile::IrGraph& g, int64_t scale_divides,
                               int64_t fill_when) {
  EXPECT_EQ(CountOps(g, "MaskedSoftmax"), 1);
  ASSERT_FALSE(g.nodes.empty());
  ASSERT_EQ(g.nodes.back().op_type, "MaskedSoftmax");
  EXPECT_EQ(IntAttrOr(g.nodes.back(), "scale_divides", -1), scale_divides);
  EXPECT_EQ(IntAttrOr(g.nodes.back(), "fill_when", -1), fill_when);
}

// BERT: Softmax(Q·Kᵀ / 8 + mask) · V, the mask [1, 1, 1, seq] of 0 and -10000.
TEST(FuseMaskedSoftmax, ScaledScoresPlusAnAttentionMask) {
  ModelBuilder b(71);
  const std::vector<int64_t> qkv = {1, kHeads, kSeq, kHeadSize};
  const std::string q = b.Input("q", qkv), k = b.Input("k", qkv), v = b.Input("v", qkv);
  const std::string mask = b.Input("mask", {1, 1, 1, kSeq});
  const std::string scaled = b.Node("Div", {Scores(b, q, k), b.Constant({}, {8.0f})});
  const std::string p = b.Node("Softmax", {b.Node("Add", {scaled, mask})}, {AttrInt("axis", -1)});
  b.Output(b.Node("MatMul", {p, v}));
  std::vector<float> m(kSeq, 0.0f);
  m[kSeq - 1] = m[kSeq - 2] = -10000.0f;  // padding
  const compile::IrGraph g = OptimiseAndCompareTightly(
      b,
      {RandomTensor(qkv, b.rng()), RandomTensor(qkv, b.rng()), RandomTensor(qkv, b.rng()),
       RandomTensor({1, 1, 1, kSeq}, b.rng())},
      "random mask");
  EXPECT_EQ(CountOps(g, "MaskedSoftmax"), 1);
  EXPECT_EQ(CountOps(g, "Softmax"), 0);
  EXPECT_EQ(CountOps(g, "Add"), 0);
  EXPECT_EQ(CountOps(g, "Div"), 0);  // a post-op of the product, or the fused node's scale
  // The padding columns get (almost) nothing.
  auto reference = ImportGraph(b);
  ASSERT_TRUE(reference.ok());
  Tensor padding_mask = Tensor::View(DataType::kFloat32, {1, 1, 1, kSeq}, m.data(), nullptr);
  const std::vector<Tensor> inputs = {RandomTensor(qkv, b.rng()), RandomTensor(qkv, b.rng()),
                                      RandomTensor(qkv, b.rng()), padding_mask};
  const std::vector<Tensor> want = Evaluate(*reference, inputs);
  const std::vector<Tensor> got = Evaluate(g, inputs);
  ASSERT_EQ(got.size(), 1u);
  ExpectMatches(got[0], want[0], kSoftmaxRel, "padding mask");
}

// GPT-2: Where(causal, Q·Kᵀ / s, -inf) with s computed at run time (here a graph input).
TEST(FuseMaskedSoftmax, CausalSelectionAndARunTimeScale) {
  ModelBuilder b(72);
  const std::vector<int64_t> qkv = {1, kHeads, kSeq, kHeadSize};
  const std::string q = b.Input("q", qkv), k = b.Input("k", qkv);
  const std::string s = b.Input("s", {});
  const std::string causal = b.Input("causal", {1, 1, kSeq, kSeq}, {}, onnx::TensorProto::BOOL);
  const std::string scaled = b.Node("Div", {Scores(b, q, k), s});
  const std::string masked =
      b.Node("Where", {causal, scaled, b.Constant({}, {-std::numeric_limits<float>::infinity()})});
  b.Output(b.Node("Softmax", {masked}));
  const float root = std::sqrt(static_cast<float>(kHeadSize));
  const Tensor scale = Tensor::View(DataType::kFloat32, {}, &root, nullptr);
  const compile::IrGraph g = OptimiseAndCompareTightly(
      b,
      {RandomTensor(qkv, b.rng()), RandomTensor(qkv, b.rng()), scale,
       BoolMatrix({1, 1, kSeq, kSeq}, [](int64_t r, int64_t c) { return c <= r; })},
      "causal");
  EXPECT_EQ(CountOps(g, "Where"), 0);
  EXPECT_EQ(CountOps(g, "Div"), 0);
  ExpectEndsInMaskedSoftmax(g, /*scale_divides=*/1, /*fill_when=*/0);
}

// The fill as Where's second input (selected where the condition holds), a scale multiplied
// from the left, and a condition that broadcasts the scores up to several batches.
TEST(FuseMaskedSoftmax, FillWhereTheConditionHoldsAndAScaleOnTheLeft) {
  ModelBuilder b(73);
  const std::vector<int64_t> qkv = {1, kHeads, kSeq, kHeadSize};
  const std::string q = b.Input("q", qkv), k = b.Input("k", qkv);
  const std::string blocked = b.Input("blocked", {2, 1, kSeq, kSeq}, {}, onnx::TensorProto::BOOL);
  const std::string scaled = b.Node("Mul", {b.Input("s", {1}), Scores(b, q, k)});
  b.Output(b.Node("Softmax", {b.Node("Where", {blocked, b.Constant({}, {-1e9f}), scaled})}));
  const float half = 0.5f;
  const compile::IrGraph g = OptimiseAndCompareTightly(
      b,
      {RandomTensor(qkv, b.rng()), RandomTensor(qkv, b.rng()),
       BoolMatrix({2, 1, kSeq, kSeq}, [](int64_t r, int64_t c) { return (r + c) % 3 == 0; }),
       Tensor::View(DataType::kFloat32, {1}, &half, nullptr)},
      "fill when true");
  EXPECT_EQ(CountOps(g, "Mul"), 0);
  ExpectEndsInMaskedSoftmax(g, /*scale_divides=*/0, /*fill_when=*/1);
}

// Not fused: the masked scores are also a graph output, or the Softmax is over another axis.
TEST(FuseMaskedSoftmax, ChainsItCannotReproduceStay) {
  ModelBuilder b(74);
  const std::vector<int64_t> qkv = {1, kHeads, kSeq, kHeadSize};
  const std::string q = b.Input("q", qkv), k = b.Input("k", qkv);
  const std::string mask = b.Input("mask", {1, 1, 1, kSeq});
  const std::string masked = b.Node("Add", {Scores(b, q, k), mask});
  b.Output(b.Node("Softmax", {masked}, {AttrInt("axis", -1)}));
  b.Output(masked);
  const std::string other = b.Node("Add", {Scores(b, q, k), mask});
  b.Output(b.Node("Softmax", {other}, {AttrInt("axis", 2)}));
  const compile::IrGraph g =
      OptimiseAndCompareTightly(b,
                                {RandomTensor(qkv, b.rng()), RandomTensor(qkv, b.rng()),
                                 RandomTensor({1, 1, 1, kSeq}, b.rng())},
                                "unfusable");
  EXPECT_EQ(CountOps(g, "MaskedSoftmax"), 0);
  EXPECT_EQ(CountOps(g, "Softmax"), 2);
  EXPECT_EQ(CountOps(g, "Add"), 2);
}

}  // namespace
}  // namespace epctx::testing::dnnl
