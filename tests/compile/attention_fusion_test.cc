// The attention a PyTorch Llama export spells out node by node becomes one com.epctx Attention
// (FuseAttention): the optimised graph must compute what the unoptimised one does, and chains
// whose meaning the fused node would change must stay as they are.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compile/dnnl_graph_helpers.h"
#include "compile/passes/passes.h"

namespace epctx::testing::dnnl {
namespace {

constexpr int64_t kAttentionHeads = 4, kAttentionKvHeads = 2, kAttentionSeq = 5,
                  kAttentionHeadSize = 8;

struct AttentionGraph {
  float fill = -std::numeric_limits<float>::infinity();
  std::vector<int64_t> mask_shape = {kAttentionSeq, kAttentionSeq};
};

// Hugging Face's repeat_kv: [B, kvN, T, H] -> [B, N, T, H], each KV head kAttentionHeads /
// kAttentionKvHeads times; T = `rows`.
std::string RepeatKv(ModelBuilder& b, const std::string& x, int64_t rows = kAttentionSeq) {
  const int64_t group = kAttentionHeads / kAttentionKvHeads;
  const std::string unsqueezed = b.Node("Unsqueeze", {x, b.Int64Constant({1}, {2})});
  const std::string expanded = b.Node(
      "Expand",
      {unsqueezed, b.Int64Constant({5}, {1, kAttentionKvHeads, group, rows, kAttentionHeadSize})});
  return b.Node("Reshape",
                {expanded, b.Int64Constant({4}, {1, kAttentionHeads, rows, kAttentionHeadSize})});
}

// softmax(where(mask, fill, Q·Kᵀ / sqrt(H))) · V, as [B, S, N, H]; the mask true where masked.
void BuildAttention(ModelBuilder& b, const AttentionGraph& a) {
  const std::string q = b.Input("q", {1, kAttentionHeads, kAttentionSeq, kAttentionHeadSize});
  const std::string k = b.Input("k", {1, kAttentionKvHeads, kAttentionSeq, kAttentionHeadSize});
  const std::string v = b.Input("v", {1, kAttentionKvHeads, kAttentionSeq, kAttentionHeadSize});
  const std::string mask = b.Input("mask", a.mask_shape, {}, onnx::TensorProto::BOOL);
  const std::string kt = b.Node("Transpose", {RepeatKv(b, k)}, {AttrInts("perm", {0, 1, 3, 2})});
  const std::string scores =
      b.Node("Div", {b.Node("MatMul", {q, kt}),
                     b.Constant({}, {std::sqrt(static_cast<float>(kAttentionHeadSize))})});
  const std::string masked = b.Node("Where", {mask, b.Constant({}, {a.fill}), scores});
  const std::string p = b.Node("Softmax", {masked}, {AttrInt("axis", -1)});
  const std::string out = b.Node("MatMul", {p, RepeatKv(b, v)});
  b.Output(b.Node("Transpose", {out}, {AttrInts("perm", {0, 2, 1, 3})}));
}

// Optimises the graph, checks it against the unoptimised one on random inputs with `mask`, and
// returns it.
compile::IrGraph OptimiseAndCompare(ModelBuilder& b, const Tensor& mask, const std::string& what) {
  return OptimiseAndCompareWithin(
      b,
      {RandomTensor({1, kAttentionHeads, kAttentionSeq, kAttentionHeadSize}, b.rng()),
       RandomTensor({1, kAttentionKvHeads, kAttentionSeq, kAttentionHeadSize}, b.rng()),
       RandomTensor({1, kAttentionKvHeads, kAttentionSeq, kAttentionHeadSize}, b.rng()), mask},
      kRel, what);
}

bool Causal(int64_t row, int64_t column) {
  return column > row;
}

TEST(FuseAttention, LlamaAttentionWithRepeatedKvHeadsIsOneNode) {
  ModelBuilder b(81);
  BuildAttention(b, {});
  const compile::IrGraph g =
      OptimiseAndCompare(b, BoolMatrix({kAttentionSeq, kAttentionSeq}, Causal), "causal");
  EXPECT_EQ(CountOps(g, "Attention"), 1);
  for (const char* op : {"Softmax", "MaskedSoftmax", "Where", "Expand", "Transpose", "Div"}) {
    EXPECT_EQ(CountOps(g, op), 0) << op;
  }
  // Any other mask (row 0 sees only key 0, the others all but key 1) through the bias.
  OptimiseAndCompare(b,
                     BoolMatrix({kAttentionSeq, kAttentionSeq},
                                [](int64_t r, int64_t c) { return r == 0 ? c > 0 : c == 1; }),
                     "other mask");
}

// A decode step: the presents are Concat(past, new) on the sequence axis, graph outputs and the
// attention's keys and values, and a Shape of one is read before the attention (an export sizes
// its mask so). The Concats move into the Attention (FuseCacheConcatIntoAttention), the Shape
// becomes Shape(past) + [0, 0, 1, 0]; outputs, presents and the shape as before.
// A decode step over `total` keys (a past of total - 1): the cache Concats move into the
// Attention, and it computes what the nodes do.
void CheckDecodeStep(uint32_t seed, int64_t total, int threads) {
  ModelBuilder b(seed);
  const int64_t past = total - 1;
  const std::string q = b.Input("q", {1, kAttentionHeads, 1, kAttentionHeadSize});
  // The past's length symbolic, as an export declares it: Shape(present) is not folded.
  const std::string past_k =
      b.Input("past_k", {1, kAttentionKvHeads, -1, kAttentionHeadSize}, {"", "", "past", ""});
  const std::string new_k = b.Input("new_k", {1, kAttentionKvHeads, 1, kAttentionHeadSize});
  const std::string past_v =
      b.Input("past_v", {1, kAttentionKvHeads, -1, kAttentionHeadSize}, {"", "", "past", ""});
  const std::string new_v = b.Input("new_v", {1, kAttentionKvHeads, 1, kAttentionHeadSize});
  const std::string mask = b.Input("mask", {1, total}, {}, onnx::TensorProto::BOOL);
  const std::string k = b.Node("Concat", {past_k, new_k}, {AttrInt("axis", 2)});
  const std::string v = b.Node("Concat", {past_v, new_v}, {AttrInt("axis", -2)});
  const std::string rows = b.Node("Shape", {k});
  const std::string kt =
      b.Node("Transpose", {RepeatKv(b, k, total)}, {AttrInts("perm", {0, 1, 3, 2})});
  const std::string scores =
      b.Node("Div", {b.Node("MatMul", {q, kt}),
                     b.Constant({}, {std::sqrt(static_cast<float>(kAttentionHeadSize))})});
  const std::string masked =
      b.Node("Where", {mask, b.Constant({}, {-std::numeric_limits<float>::infinity()}), scores});
  const std::string p = b.Node("Softmax", {masked}, {AttrInt("axis", -1)});
  b.Output(b.Node("MatMul", {p, RepeatKv(b, v, total)}));
  b.Output(k);
  b.Output(v);
  b.Output(b.Node("Cast", {rows}, {AttrInt("to", onnx::TensorProto::FLOAT)}));  // float outputs
  auto random = [&](int64_t heads, int64_t rows_) {
    return RandomTensor({1, heads, rows_, kAttentionHeadSize}, b.rng());
  };
  const compile::IrGraph g = OptimiseAndCompareWithin(
      b,
      {random(kAttentionHeads, 1), random(kAttentionKvHeads, past), random(kAttentionKvHeads, 1),
       random(kAttentionKvHeads, past), random(kAttentionKvHeads, 1),
       BoolMatrix({1, total}, [](int64_t, int64_t c) { return c == 2; })},
      kRel, "decode step over " + std::to_string(total) + " keys", threads);
  EXPECT_EQ(CountOps(g, "Attention"), 1);
  EXPECT_EQ(CountOps(g, "Concat"), 0);
}

TEST(FuseAttention, DecodeCacheConcatsMoveIntoTheAttention) {
  CheckDecodeStep(83, kAttentionSeq, 1);
}

// A past of several 256-row blocks: those of the past alone are streamed into the present and
// attended to from the past, the last one copied and read from the present (1 and 2 threads).
TEST(FuseAttention, DecodeStepOverALongPast) {
  for (int threads : {1, 2}) CheckDecodeStep(84, 601, threads);
}

// PyTorch's lowest float as the fill: a row masked whole gets equal weights, as in the nodes.
TEST(FuseAttention, LowestFloatFillKeepsARowMaskedWhole) {
  ModelBuilder b(82);
  BuildAttention(b, {std::numeric_limits<float>::lowest(), {kAttentionSeq, kAttentionSeq}});
  const compile::IrGraph g =
      OptimiseAndCompare(b,
                         BoolMatrix({kAttentionSeq, kAttentionSeq},
                                    [](int64_t r, int64_t c) { return r == 2 || Causal(r, c); }),
                         "row 2 masked whole");
  EXPECT_EQ(CountOps(g, "Attention"), 1);
}

// A fill of -1e4 would leave the scores of a row masked whole in the sum: not fused.
TEST(FuseAttention, FillThatCannotAbsorbTheScoresStays) {
  ModelBuilder b(83);
  BuildAttention(b, {-1e4f, {kAttentionSeq, kAttentionSeq}});
  const compile::IrGraph g =
      OptimiseAndCompare(b,
                         BoolMatrix({kAttentionSeq, kAttentionSeq},
                                    [](int64_t r, int64_t c) { return r == 2 || Causal(r, c); }),
                         "fill -1e4");
  EXPECT_EQ(CountOps(g, "Attention"), 0);
}

// A mask of two batches broadcasts the scores of one up: the output has two, so not fused.
TEST(FuseAttention, MaskThatBroadcastsTheScoresUpStays) {
  ModelBuilder b(84);
  BuildAttention(b,
                 {-std::numeric_limits<float>::infinity(), {2, 1, kAttentionSeq, kAttentionSeq}});
  const compile::IrGraph g = OptimiseAndCompare(
      b, BoolMatrix({2, 1, kAttentionSeq, kAttentionSeq}, Causal), "two-batch mask");
  EXPECT_EQ(CountOps(g, "Attention"), 0);
}

}  // namespace
}  // namespace epctx::testing::dnnl
