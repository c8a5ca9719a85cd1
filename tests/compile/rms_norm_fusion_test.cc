// RMS normalization as PyTorch exports it becomes SimplifiedLayerNormalization, and a residual
// Add before one SkipSimplifiedLayerNormalization (FuseRmsNorms): the optimised graph must
// compute what the unoptimised one does on every form of the chain an export writes, and chains
// the fused nodes cannot reproduce must stay as they are.
#include <gtest/gtest.h>

#include "compile/dnnl_graph_helpers.h"
#include "compile/passes/passes.h"

namespace epctx::testing::dnnl {
namespace {

constexpr int64_t kHidden = 24;

// How a test writes the chain.
struct Form {
  bool pow = true;      // Pow(x, 2), else Mul(x, x)
  int inverse = 0;      // 0: Mul(x, Div(1, root)); 1: Mul(x, Reciprocal(root)); 2: Div(x, root)
  bool x_first = true;  // Mul(x, inv) or Mul(inv, x)
  bool weight_first = true;    // Mul(weight, normed) or Mul(normed, weight)
  bool epsilon_first = false;  // Add(epsilon, mean square) or Add(mean square, epsilon)
};

// weight * (x / sqrt(mean(x^2, -1) + epsilon)) written as `form` says; returns the output.
std::string RmsNorm(ModelBuilder& b, const std::string& x, const std::string& weight, float epsilon,
                    const Form& form = {}) {
  const std::string square =
      form.pow ? b.Node("Pow", {x, b.Constant({}, {2.0f})}) : b.Node("Mul", {x, x});
  const std::string mean =
      b.Node("ReduceMean", {square}, {AttrInts("axes", {-1}), AttrInt("keepdims", 1)});
  const std::string eps = b.Constant({}, {epsilon});
  const std::string root =
      b.Node("Sqrt",
             {b.Node("Add", form.epsilon_first ? std::vector{eps, mean} : std::vector{mean, eps})});
  std::string normed;
  if (form.inverse == 2) {
    normed = b.Node("Div", {x, root});
  } else {
    const std::string inv = form.inverse == 1 ? b.Node("Reciprocal", {root})
                                              : b.Node("Div", {b.Constant({}, {1.0f}), root});
    normed = b.Node("Mul", form.x_first ? std::vector{x, inv} : std::vector{inv, x});
  }
  return b.Node("Mul",
                form.weight_first ? std::vector{weight, normed} : std::vector{normed, weight});
}

// Optimises the graph, checks it against the unoptimised one on `inputs`, and returns it.
compile::IrGraph OptimiseAndCompare(const ModelBuilder& b, const std::vector<Tensor>& inputs,
                                    const std::string& what) {
  return OptimiseAndCompareWithin(b, inputs, kRel, what);
}

float FloatAttr(const compile::IrNode& n, std::string_view name) {
  const compile::IrAttribute* a = n.FindAttr(name);
  return a != nullptr ? a->f : -1.0f;
}

TEST(FuseRmsNorms, EveryFormOfTheChainBecomesSimplifiedLayerNormalization) {
  const Form forms[] = {
      {},
      {.pow = false, .x_first = false, .weight_first = false},
      {.inverse = 1, .epsilon_first = true},
      {.inverse = 2, .weight_first = false},
  };
  int seed = 80;
  for (const Form& form : forms) {
    ModelBuilder b(++seed);
    const std::string x = b.Input("x", {1, 5, kHidden});
    b.Output(RmsNorm(b, x, b.Weight({kHidden}, 0.5f, 1.5f), 1e-6f, form));
    const std::string what = Cat("form ", seed);
    const compile::IrGraph g =
        OptimiseAndCompare(b, {RandomTensor({1, 5, kHidden}, b.rng())}, what);
    EXPECT_EQ(OpList(g), std::vector<std::string>{"SimplifiedLayerNormalization"}) << what;
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(FloatAttr(g.nodes[0], "epsilon"), 1e-6f) << what;
    EXPECT_EQ(IntAttrOr(g.nodes[0], "axis", 0), -1) << what;
  }
}

// A weight of [1, 1, H] is the same row: it is given to the fused node as [H].
TEST(FuseRmsNorms, WeightWithLeadingUnitDims) {
  ModelBuilder b(90);
  const std::string x = b.Input("x", {2, 3, kHidden});
  b.Output(RmsNorm(b, x, b.Weight({1, 1, kHidden}, 0.5f, 1.5f), 1e-5f));
  const compile::IrGraph g =
      OptimiseAndCompare(b, {RandomTensor({2, 3, kHidden}, b.rng())}, "[1, 1, H] weight");
  ASSERT_EQ(OpList(g), std::vector<std::string>{"SimplifiedLayerNormalization"});
  EXPECT_EQ(compile::ValueOf(g, g.nodes[0].inputs[1]).shape, std::vector<int64_t>{kHidden});
}

// Llama's layers: h = x + attended; norm(h) feeds the next block, h the next residual; the last
// sum is read by the final norm only. Batch and sequence are symbolic, as in an export.
TEST(FuseRmsNorms, ResidualAddsBecomeSkipSimplifiedLayerNormalization) {
  ModelBuilder b(91);
  const std::vector<int64_t> shape = {-1, -1, kHidden};
  const std::vector<std::string> dims = {"batch", "sequence", ""};
  const std::string x = b.Input("x", shape, dims);
  const std::string attended = b.Input("attended", shape, dims);
  const std::string mlp = b.Input("mlp", shape, dims);
  const std::string h = b.Node("Add", {x, attended});
  const std::string normed = RmsNorm(b, h, b.Weight({kHidden}, 0.5f, 1.5f), 1e-5f);
  const std::string h2 = b.Node("Add", {h, b.Node("Mul", {normed, mlp})});
  b.Output(RmsNorm(b, h2, b.Weight({kHidden}, 0.5f, 1.5f), 1e-6f, {.weight_first = false}));
  const std::vector<Tensor> inputs = {RandomTensor({2, 3, kHidden}, b.rng()),
                                      RandomTensor({2, 3, kHidden}, b.rng()),
                                      RandomTensor({2, 3, kHidden}, b.rng())};
  const compile::IrGraph g = OptimiseAndCompare(b, inputs, "residuals");
  EXPECT_EQ(OpList(g),
            (std::vector<std::string>{"com.microsoft:SkipSimplifiedLayerNormalization", "Mul",
                                      "com.microsoft:SkipSimplifiedLayerNormalization"}));
  ASSERT_EQ(g.nodes.size(), 3u);
  // The first sum is read by the second residual: the fused node writes it.
  ASSERT_EQ(g.nodes[0].outputs.size(), 4u);
  EXPECT_GE(g.nodes[0].outputs[3], 0);
  EXPECT_EQ(g.nodes[2].inputs[0], g.nodes[0].outputs[3]);
  EXPECT_EQ(g.nodes[2].outputs[3], -1);  // the last sum: nobody else reads it
  EXPECT_EQ(FloatAttr(g.nodes[0], "epsilon"), 1e-5f);
  EXPECT_EQ(FloatAttr(g.nodes[2], "epsilon"), 1e-6f);
}

// A model's own SimplifiedLayerNormalization after a residual Add becomes the Skip op too; not
// when its scale is computed after the Add (the fused node takes the Add's place).
TEST(FuseRmsNorms, ModelNormsAfterAnAdd) {
  ModelBuilder b(93);
  const std::string a = b.Input("a", {2, 3, kHidden});
  const std::string c = b.Input("c", {2, 3, kHidden});
  const std::string w = b.Input("w", {kHidden});
  b.Output(b.Node("SimplifiedLayerNormalization",
                  {b.Node("Add", {a, c}), b.Weight({kHidden}, 0.5f, 1.5f)},
                  {AttrFloat("epsilon", 1e-4f)}));
  const std::string later_sum = b.Node("Add", {c, a});
  const std::string later_scale = b.Node("Mul", {w, b.Constant({}, {2.0f})});
  b.Output(b.Node("SimplifiedLayerNormalization", {later_sum, later_scale}));
  const compile::IrGraph g =
      OptimiseAndCompare(b,
                         {RandomTensor({2, 3, kHidden}, b.rng()),
                          RandomTensor({2, 3, kHidden}, b.rng()), RandomTensor({kHidden}, b.rng())},
                         "model norms");
  EXPECT_EQ(OpList(g), (std::vector<std::string>{"com.microsoft:SkipSimplifiedLayerNormalization",
                                                 "Add", "Mul", "SimplifiedLayerNormalization"}));
  ASSERT_FALSE(g.nodes.empty());
  EXPECT_EQ(FloatAttr(g.nodes[0], "epsilon"), 1e-4f);
}

// Not fused: an intermediate also read elsewhere, a weight computed at run time, a mean over
// another axis, a weight that would broadcast x up; and no Skip for an Add that broadcasts.
TEST(FuseRmsNorms, ChainsItCannotReproduceStay) {
  ModelBuilder b(92);
  const std::string x = b.Input("x", {2, 3, kHidden});
  const std::string w = b.Input("w", {kHidden});
  {
    const std::string square = b.Node("Pow", {x, b.Constant({}, {2.0f})});
    const std::string mean = b.Node("ReduceMean", {square}, {AttrInts("axes", {-1})});
    b.Output(mean);  // read elsewhere
    const std::string root = b.Node("Sqrt", {b.Node("Add", {mean, b.Constant({}, {1e-5f})})});
    b.Output(b.Node("Mul", {b.Weight({kHidden}, 0.5f, 1.5f), b.Node("Div", {x, root})}));
  }
  b.Output(RmsNorm(b, x, w, 1e-5f));  // weight not constant
  {
    const std::string square = b.Node("Mul", {x, x});
    const std::string mean =
        b.Node("ReduceMean", {square}, {AttrInts("axes", {1}), AttrInt("keepdims", 1)});
    const std::string root = b.Node("Sqrt", {b.Node("Add", {mean, b.Constant({}, {1e-5f})})});
    b.Output(b.Node("Mul", {b.Weight({kHidden}, 0.5f, 1.5f), b.Node("Div", {x, root})}));
  }
  b.Output(RmsNorm(b, x, b.Weight({1, 1, 1, kHidden}, 0.5f, 1.5f), 1e-5f));  // rank 4 > 3
  const std::string bias_sum = b.Node("Add", {x, b.Weight({kHidden}, -1, 1)});
  b.Output(RmsNorm(b, bias_sum, b.Weight({kHidden}, 0.5f, 1.5f), 1e-5f));
  const compile::IrGraph g = OptimiseAndCompare(
      b, {RandomTensor({2, 3, kHidden}, b.rng()), RandomTensor({kHidden}, b.rng())}, "unfusable");
  EXPECT_EQ(CountOps(g, "SimplifiedLayerNormalization"), 1);  // the broadcasting Add's norm
  EXPECT_EQ(CountOps(g, "SkipSimplifiedLayerNormalization"), 0);
  EXPECT_EQ(CountOps(g, "Sqrt"), 4);
}

}  // namespace
}  // namespace epctx::testing::dnnl
