// PyTorch's rotary embedding, x * cos + rotate_half(x) * sin, becomes one com.epctx RotateHalf
// (FuseRotateHalf): the optimised graph must compute exactly what the unoptimised one does (the
// kernel rounds the two products and their sum as the nodes do), on the forms a Llama export
// writes, and a rotate_half whose two halves do not meet must stay as it is.
#include <gtest/gtest.h>

#include <limits>

#include "compile/dnnl_graph_helpers.h"
#include "compile/passes/passes.h"

namespace epctx::testing::dnnl {
namespace {

constexpr int64_t kRotaryHeads = 3, kRotarySeq = 5, kRotaryHeadSize = 8;
constexpr int64_t kSliceToTheEnd = std::numeric_limits<int64_t>::max();

// How a test writes the chain.
struct RotaryForm {
  bool x_first = true;    // Mul(x, cos) or Mul(cos, x)
  bool cos_first = true;  // Add(x cos, rotated sin) or Add(rotated sin, x cos)
  // The split: computed as the export does (Shape(x)[-1] / 2, Unsqueezed once per Slice), or
  // these constants for the negated half's start and the other half's end.
  bool computed_split = true;
  int64_t tail_start = kRotaryHeadSize / 2, head_end = kRotaryHeadSize / 2;
};

// x * cos + rotate_half(x) * sin as `form` writes it; returns the output.
std::string Rotary(ModelBuilder& b, const std::string& x, const std::string& cos,
                   const std::string& sin, const RotaryForm& form = {}) {
  std::string tail_start, head_end;
  if (form.computed_split) {
    const std::string last =
        b.Node("Gather", {b.Node("Shape", {x}), b.Int64Constant({}, {3})}, {AttrInt("axis", 0)});
    const std::string half = b.Node("Div", {last, b.Int64Constant({}, {2})});
    tail_start = b.Node("Unsqueeze", {half, b.Int64Constant({1}, {0})});
    head_end = b.Node("Unsqueeze", {half, b.Int64Constant({1}, {0})});
  } else {
    tail_start = b.Int64Constant({1}, {form.tail_start});
    head_end = b.Int64Constant({1}, {form.head_end});
  }
  const std::string axes = b.Int64Constant({1}, {3});
  const std::string steps = b.Int64Constant({1}, {1});
  const std::string tail =
      b.Node("Slice", {x, tail_start, b.Int64Constant({1}, {kSliceToTheEnd}), axes, steps});
  const std::string head = b.Node("Slice", {x, b.Int64Constant({1}, {0}), head_end, axes, steps});
  const std::string rotated =
      b.Node("Concat", {b.Node("Neg", {tail}), head}, {AttrInt("axis", -1)});
  const std::string xc = b.Node("Mul", form.x_first ? std::vector{x, cos} : std::vector{cos, x});
  const std::string rs = b.Node("Mul", {rotated, sin});
  return b.Node("Add", form.cos_first ? std::vector{xc, rs} : std::vector{rs, xc});
}

// The queries and the keys of a Llama layer: [1, heads, seq, head size] each, rotated by the
// same cos and sin ([1, 1, seq, head size], as the export gathers them for the positions).
TEST(FuseRotateHalf, QueriesAndKeysAsALlamaExportWritesThem) {
  ModelBuilder b(91);
  const std::vector<int64_t> qk = {1, kRotaryHeads, kRotarySeq, kRotaryHeadSize},
                             angles = {1, 1, kRotarySeq, kRotaryHeadSize};
  const std::string q = b.Input("q", qk), k = b.Input("k", qk);
  const std::string cos = b.Input("cos", angles), sin = b.Input("sin", angles);
  // A Slice by a computed split leaves the shapes to the run: the outputs are declared of rank 4.
  b.Output(Rotary(b, q, cos, sin), 4);
  b.Output(Rotary(b, k, cos, sin, {.x_first = false, .cos_first = false}), 4);
  const compile::IrGraph g =
      OptimiseAndCompareWithin(b,
                               {RandomTensor(qk, b.rng()), RandomTensor(qk, b.rng()),
                                RandomTensor(angles, b.rng()), RandomTensor(angles, b.rng())},
                               0, "queries and keys");
  EXPECT_EQ(CountOps(g, "RotateHalf"), 2);
  for (const char* op : {"Slice", "Neg", "Concat", "Mul", "Add"}) {
    EXPECT_EQ(CountOps(g, op), 0) << op;
  }
}

// Constant splits, negative or past the end, are read as the Slices read them; cos and sin of
// rank 2 broadcast over the heads.
TEST(FuseRotateHalf, ConstantSplitsAndBroadcastAngles) {
  for (int64_t split : {int64_t{3}, int64_t{-3}, int64_t{0}, int64_t{kRotaryHeadSize + 4}}) {
    ModelBuilder b(92);
    const std::vector<int64_t> qk = {2, kRotaryHeads, kRotarySeq, kRotaryHeadSize},
                               angles = {kRotarySeq, kRotaryHeadSize};
    const std::string q = b.Input("q", qk);
    const std::string cos = b.Input("cos", angles), sin = b.Input("sin", angles);
    b.Output(
        Rotary(b, q, cos, sin, {.computed_split = false, .tail_start = split, .head_end = split}));
    const compile::IrGraph g = OptimiseAndCompareWithin(
        b,
        {RandomTensor(qk, b.rng()), RandomTensor(angles, b.rng()), RandomTensor(angles, b.rng())},
        0, "split " + std::to_string(split));
    EXPECT_EQ(CountOps(g, "RotateHalf"), 1) << split;
  }
}

// rotate_half(x) read by something else too (here a graph output): the nodes stay, since the
// fused node would not make it.
TEST(FuseRotateHalf, ARotatedHalfReadElsewhereStays) {
  ModelBuilder b(93);
  const std::vector<int64_t> qk = {1, kRotaryHeads, kRotarySeq, kRotaryHeadSize},
                             angles = {1, 1, kRotarySeq, kRotaryHeadSize};
  const std::string q = b.Input("q", qk);
  const std::string cos = b.Input("cos", angles), sin = b.Input("sin", angles);
  const std::string y = Rotary(b, q, cos, sin);
  b.Output(y, 4);
  auto imported = ImportGraph(b);
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  // The Concat's output, rotate_half(q), becomes a graph output as well.
  std::string rotated;
  for (const compile::IrNode& n : imported->nodes) {
    if (n.op_type == "Concat") rotated = imported->values[static_cast<size_t>(n.outputs[0])].name;
  }
  ASSERT_FALSE(rotated.empty());
  b.Output(rotated, 4);
  const compile::IrGraph g = OptimiseAndCompareWithin(
      b, {RandomTensor(qk, b.rng()), RandomTensor(angles, b.rng()), RandomTensor(angles, b.rng())},
      0, "rotate_half read elsewhere");
  EXPECT_EQ(CountOps(g, "RotateHalf"), 0);
  EXPECT_EQ(CountOps(g, "Concat"), 1);
}

}  // namespace
}  // namespace epctx::testing::dnnl
