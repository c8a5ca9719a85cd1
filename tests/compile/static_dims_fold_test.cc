// Gather(Shape(x), indices) folds to a constant when every dim it picks is static in x, though
// others are not (FoldConstants): the optimised graph keeps only the Gathers of symbolic dims and
// computes what the unoptimised one does for every batch size; Shape-15's start, negative and
// 1-D indices are read as the Gather reads them.
#include <gtest/gtest.h>

#include "compile/dnnl_graph_helpers.h"
#include "compile/passes/passes.h"

namespace epctx::testing::dnnl {
namespace {

// Reshapes x [batch, 4, 6] to [batch, 24] through a target computed from its Shape the way a
// PyTorch export computes one; `picks` writes the Gathers of the static dims.
enum class Picks { kScalars, kNegative, kVector, kShapeStart };

std::string Flatten(ModelBuilder& b, const std::string& x, Picks picks) {
  const std::string shape = b.Node("Shape", {x});
  const std::string batch = b.Node(
      "Unsqueeze", {b.Node("Gather", {shape, b.Int64Constant({}, {0})}, {AttrInt("axis", 0)}),
                    b.Int64Constant({1}, {0})});
  std::string inner;
  switch (picks) {
    case Picks::kScalars:
      inner = b.Node("Mul", {b.Node("Gather", {shape, b.Int64Constant({}, {1})}),
                             b.Node("Gather", {shape, b.Int64Constant({}, {2})})});
      break;
    case Picks::kNegative:
      inner = b.Node("Mul", {b.Node("Gather", {shape, b.Int64Constant({}, {-2})}),
                             b.Node("Gather", {shape, b.Int64Constant({}, {-1})})});
      break;
    case Picks::kVector:
      inner = b.Node("ReduceProd", {b.Node("Gather", {shape, b.Int64Constant({2}, {1, 2})})},
                     {AttrInt("keepdims", 0)});
      break;
    case Picks::kShapeStart: {
      const std::string tail = b.Node("Shape", {x}, {AttrInt("start", 1)});
      inner = b.Node("Mul", {b.Node("Gather", {tail, b.Int64Constant({}, {0})}),
                             b.Node("Gather", {tail, b.Int64Constant({}, {1})})});
      break;
    }
  }
  const std::string target =
      b.Node("Concat", {batch, b.Node("Unsqueeze", {inner, b.Int64Constant({1}, {0})})},
             {AttrInt("axis", 0)});
  return b.Node("Reshape", {x, target});
}

TEST(FoldStaticDims, GathersOfStaticDimsBecomeConstants) {
  for (Picks picks : {Picks::kScalars, Picks::kNegative, Picks::kVector, Picks::kShapeStart}) {
    for (int64_t batch : {int64_t{2}, int64_t{3}}) {
      ModelBuilder b(81, /*opset=*/17);
      const std::string x = b.Input("x", {-1, 4, 6}, {"batch"});
      b.Output(Flatten(b, x, picks), 2);
      const std::string what =
          "picks " + std::to_string(static_cast<int>(picks)) + ", batch " + std::to_string(batch);
      const compile::IrGraph g =
          OptimiseAndCompareWithin(b, {RandomTensor({batch, 4, 6}, b.rng())}, 0, what);
      // The batch dim's Gather stays; the static dims' Gathers and what they fed fold away.
      EXPECT_EQ(CountOps(g, "Gather"), 1) << what;
      EXPECT_EQ(CountOps(g, "Mul") + CountOps(g, "ReduceProd"), 0) << what;
    }
  }
}

// A Gather of a symbolic dim, or of an index out of range (the run reports it), stays.
TEST(FoldStaticDims, SymbolicDimsStay) {
  ModelBuilder b(82);
  const std::string x = b.Input("x", {-1, -1, 6}, {"batch", "rows"});
  const std::string shape = b.Node("Shape", {x});
  const std::string rows = b.Node("Gather", {shape, b.Int64Constant({}, {1})});
  const std::string cols = b.Node("Gather", {shape, b.Int64Constant({}, {2})});
  const std::string target =
      b.Node("Concat",
             {b.Int64Constant({1}, {-1}),
              b.Node("Unsqueeze", {b.Node("Mul", {rows, cols}), b.Int64Constant({1}, {0})})},
             {AttrInt("axis", 0)});
  b.Output(b.Node("Reshape", {x, target}), 2);
  const compile::IrGraph g =
      OptimiseAndCompareWithin(b, {RandomTensor({2, 5, 6}, b.rng())}, 0, "symbolic rows");
  EXPECT_EQ(CountOps(g, "Gather"), 1);  // rows; cols folded
  EXPECT_EQ(CountOps(g, "Mul"), 1);
}

}  // namespace
}  // namespace epctx::testing::dnnl
