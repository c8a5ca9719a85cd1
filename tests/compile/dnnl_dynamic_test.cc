// Graphs with symbolic batch and image sizes (-1 in the IR): the convolutions are lowered and
// their filters packed for a representative shape, then the optimised graph is evaluated at
// several concrete shapes against the reference kernels (the program path is in
// tests/e2e/dnnl_session_test.cc).
#include <gtest/gtest.h>

#include "compile/dnnl_graph_helpers.h"
#include "compile/passes/passes.h"

namespace epctx::testing::dnnl {
namespace {

// Imports, optimises, and compares the optimised graph with the unoptimised one at each shape
// of the single input; the optimised graph is left in `optimised_out` when given.
void CheckAtShapes(ModelBuilder& b, const std::vector<std::vector<int64_t>>& shapes,
                   const std::string& what, compile::IrGraph* optimised_out = nullptr) {
  auto reference = ImportGraph(b);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  compile::IrGraph optimised = *reference;
  auto stats = compile::RunAllPasses(optimised);
  ASSERT_TRUE(stats.ok()) << what << ": " << stats.status().ToString();
  EXPECT_GT(CountOps(optimised, "DnnlConv"), 0) << what;
  for (const auto& shape : shapes) {
    Tensor x = RandomTensor(shape, b.rng());
    const std::vector<Tensor> want = Evaluate(*reference, {x});
    const std::vector<Tensor> got = Evaluate(optimised, {x});
    ASSERT_EQ(got.size(), want.size()) << what << " at " << ShapeToString(shape);
    for (size_t i = 0; i < got.size(); ++i) {
      ExpectMatches(got[i], want[i], kRel, Cat(what, " at ", ShapeToString(shape), " output ", i));
    }
  }
  if (optimised_out != nullptr) *optimised_out = std::move(optimised);
}

// A stem (3 channels, 7x7 stride 2), a blocked chain with pooling, a depthwise conv, an Add
// of two blocked tensors (not fused: the shapes are not static), a GAP, and a plain reader.
TEST(DnnlDynamic, SymbolicBatchAndImageSize) {
  ModelBuilder b(61);
  const std::string x = b.Input("x", {-1, 3, -1, -1}, {"N", "", "H", "W"});
  const std::string stem = b.Node(
      "Relu",
      {b.Conv(x, 3, 16, {7, 7}, {AttrInts("strides", {2, 2}), AttrInts("pads", {3, 3, 3, 3})})});
  const std::string p = b.Node("MaxPool", {stem},
                               {AttrInts("kernel_shape", {3, 3}), AttrInts("strides", {2, 2}),
                                AttrInts("pads", {1, 1, 1, 1})});
  const std::string d = b.Conv(p, 16, 16, {3, 3}, {AttrInts("pads", {1, 1, 1, 1})}, true, 16);
  const std::string e = b.Conv(b.Node("Relu", {d}), 16, 24, {1, 1});
  const std::string f = b.Conv(p, 16, 24, {1, 1});
  const std::string sum = b.Node("Add", {e, f});
  b.Output(
      b.Node("GlobalAveragePool", {b.Conv(sum, 24, 8, {3, 3}, {AttrInts("pads", {1, 1, 1, 1})})}));
  // A plain reader of the blocked sum: a Reorder of symbolic shape.
  b.Output(b.Node("Transpose", {sum}, {AttrInts("perm", {0, 2, 3, 1})}));
  compile::IrGraph g;
  CheckAtShapes(b, {{1, 3, 32, 32}, {2, 3, 17, 9}, {1, 3, 1, 1}, {4, 3, 64, 40}, {1, 3, 5, 71}},
                "stem chain", &g);
  EXPECT_EQ(CountOps(g, "DnnlConv"), 5);
  EXPECT_EQ(CountOps(g, "DnnlPool"), 1);  // the MaxPool; the GAP writes a graph output: plain
  // The Transpose's copy, and the GAP's (the last conv writes blocked for a pool reader).
  EXPECT_EQ(CountOps(g, "Reorder"), 2);
}

// 1-D with a symbolic length, and 3-D with symbolic depth only.
TEST(DnnlDynamic, SymbolicLengthAndDepth) {
  {
    ModelBuilder b(62);
    const std::string x = b.Input("x", {2, 8, -1}, {"", "", "T"});
    const std::string y =
        b.Conv(x, 8, 24, {5}, {AttrInts("pads", {2, 2}), AttrInts("strides", {2})});
    b.Output(b.Conv(b.Node("Tanh", {y}), 24, 16, {3}, {AttrString("auto_pad", "SAME_UPPER")}));
    CheckAtShapes(b, {{2, 8, 32}, {2, 8, 7}, {2, 8, 200}}, "1-D");
  }
  {
    ModelBuilder b(63);
    const std::string x = b.Input("x", {1, 4, -1, 6, 5}, {"", "", "D"});
    const std::string y = b.Conv(x, 4, 16, {3, 3, 3}, {AttrInts("pads", {1, 1, 1, 1, 1, 1})});
    b.Output(b.Conv(b.Node("Relu", {y}), 16, 8, {1, 1, 1}));
    CheckAtShapes(b, {{1, 4, 3, 6, 5}, {1, 4, 11, 6, 5}}, "3-D");
  }
}

// PackDnnlConv picks the filter's layout for a representative input when a dim is unknown:
// the spatial size must be at least the dilated kernel, or the compile would fail although every
// real input is long enough.
TEST(DnnlDynamic, KernelLongerThanTheRepresentativeSize) {
  ModelBuilder b(64);
  const std::string x = b.Input("x", {1, 1, -1}, {"", "", "T"});
  const std::string y = b.Conv(x, 1, 16, {64}, {AttrInts("strides", {16})});  // audio front end
  b.Output(b.Conv(b.Node("Relu", {y}), 16, 8, {3}, {AttrInts("dilations", {20})}));  // span 41
  CheckAtShapes(b, {{1, 1, 2000}, {1, 1, 777}}, "long kernel");
}

// An unknown channel dim of a convolution's input is known from its filter (W[1] x group).
TEST(DnnlDynamic, SymbolicChannelDim) {
  ModelBuilder b(65);
  const std::string x = b.Input("x", {-1, -1, -1, -1}, {"N", "C", "H", "W"});
  const std::string y = b.Conv(x, 3, 16, {3, 3}, {AttrInts("pads", {1, 1, 1, 1})});
  b.Output(b.Conv(b.Node("Relu", {y}), 16, 8, {1, 1}));
  CheckAtShapes(b, {{2, 3, 8, 8}, {1, 3, 5, 7}}, "symbolic channels");
}

}  // namespace
}  // namespace epctx::testing::dnnl
