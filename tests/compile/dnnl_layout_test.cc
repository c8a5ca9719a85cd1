// The channel-blocked activation plan (plan_layouts.cc) and the post-op fusions around it
// (fuse_dnnl_post_ops.cc) keep results equal to the reference kernels: residual additions fused
// into a DnnlConv, pooling between convolutions, Concat along channels, element-wise ops with
// per-channel constants and with other blocked tensors, graph outputs taken inside a blocked
// chain, and values read both blocked and plain. Where the plan matters (no Reorder between
// convolutions, an Add that disappeared into a DnnlConv) the optimised graph is checked too.
#include <gtest/gtest.h>

#include <algorithm>

#include "compile/dnnl_graph_helpers.h"
#include "compile/passes/passes.h"

namespace epctx::testing::dnnl {
namespace {

// Channel counts in blocks of the plan on this CPU (16 channels, 8 on AVX2), so that a case
// means the same everywhere: Whole() fills one block (16 on AVX-512), Padded() is a block and a
// half (24 there), whose last block carries padding lanes, Half() is half a block (8 there).
int64_t Whole() {
  return PlannedChannelBlock();
}
int64_t Padded() {
  return PlannedChannelBlock() * 3 / 2;
}
int64_t Half() {
  return PlannedChannelBlock() / 2;
}

// Imports the model, evaluates it with the reference kernels, runs the passes, evaluates
// again and compares every graph output. Returns the optimised graph.
compile::IrGraph CheckAgainstReference(ModelBuilder& b,
                                       const std::vector<std::vector<int64_t>>& input_shapes,
                                       const std::string& what) {
  auto graph = ImportGraph(b);
  EXPECT_TRUE(graph.ok()) << what << ": " << graph.status().ToString();
  if (!graph.ok()) return {};
  std::vector<Tensor> inputs;
  for (const auto& s : input_shapes) inputs.push_back(RandomTensor(s, b.rng()));
  const std::vector<Tensor> before = Evaluate(*graph, inputs);
  EXPECT_EQ(before.size(), graph->outputs.size()) << what;
  auto stats = compile::RunAllPasses(*graph);
  EXPECT_TRUE(stats.ok()) << what << ": " << stats.status().ToString();
  if (!stats.ok()) return {};
  const std::vector<Tensor> after = Evaluate(*graph, inputs);
  EXPECT_EQ(after.size(), before.size()) << what;
  for (size_t i = 0; i < after.size() && i < before.size(); ++i) {
    ExpectMatches(after[i], before[i], kRel, what + Cat(" output ", i));
  }
  return std::move(*graph);
}

std::vector<int64_t> Pads(size_t dims, int64_t p) {
  return std::vector<int64_t>(2 * dims, p);
}

// 3x3 (per dim) convolution with pad 1.
std::string Conv3(ModelBuilder& b, const std::string& x, int64_t c, int64_t m, size_t dims = 2) {
  return b.Conv(x, c, m, std::vector<int64_t>(dims, 3), {AttrInts("pads", Pads(dims, 1))});
}

std::string Conv1(ModelBuilder& b, const std::string& x, int64_t c, int64_t m, size_t dims = 2) {
  return b.Conv(x, c, m, std::vector<int64_t>(dims, 1));
}

// DnnlConv nodes whose post-ops add a residual.
std::vector<const compile::IrNode*> ResidualConvs(const compile::IrGraph& g) {
  std::vector<const compile::IrNode*> out;
  for (const compile::IrNode& n : g.nodes) {
    const std::vector<int64_t> ops = IntsAttr(n, "post_ops");
    if (n.op_type == "DnnlConv" && std::count(ops.begin(), ops.end(), 9) > 0) out.push_back(&n);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Residual additions.

struct ResidualCase {
  int64_t channels;
  bool residual_first_in_add;    // Add(r, y) instead of Add(y, r)
  bool residual_after_in_order;  // the residual conv comes after the fused conv in node order
};

class DnnlResidual : public ::testing::TestWithParam<ResidualCase> {};

// h -> a = Conv3(h), r = Conv1(h) -> Add(a, r) -> Relu -> Conv3 -> out.
TEST_P(DnnlResidual, AddOfTwoConvOutputsFusesIntoTheFirstConv) {
  const ResidualCase& k = GetParam();
  const int64_t c = k.channels;
  ModelBuilder b(11);
  const std::string x = b.Input("x", {2, c, 7, 6});
  const std::string h = b.Node("Relu", {Conv3(b, x, c, c)});
  std::string a, r;
  if (k.residual_after_in_order) {
    a = Conv3(b, h, c, c);
    r = Conv1(b, h, c, c);
  } else {
    r = Conv1(b, h, c, c);
    a = Conv3(b, h, c, c);
  }
  const std::string sum = k.residual_first_in_add ? b.Node("Add", {r, a}) : b.Node("Add", {a, r});
  b.Output(Conv3(b, b.Node("Relu", {sum}), c, 5));
  compile::IrGraph g = CheckAgainstReference(b, {{2, c, 7, 6}}, "residual");

  EXPECT_EQ(OpListInside(g), std::vector<std::string>(4, "com.epctx:DnnlConv"));
  const auto fused = ResidualConvs(g);
  ASSERT_EQ(fused.size(), 1u);
  // Add then the Relu after it, in that order.
  EXPECT_EQ(IntsAttr(*fused[0], "post_ops"), (std::vector<int64_t>{9, 1}));
  EXPECT_EQ(fused[0]->inputs.size(), 4u);
  EXPECT_EQ(IntAttrOr(*fused[0], "dst_layout", 0), PlannedBlockedLayout());
  // The residual input is written before the fused node runs.
  const int residual = fused[0]->inputs[3];
  bool written = false;
  for (const compile::IrNode& n : g.nodes) {
    if (&n == fused[0]) break;
    written |= std::find(n.outputs.begin(), n.outputs.end(), residual) != n.outputs.end();
  }
  EXPECT_TRUE(written) << "the residual is computed after the node that reads it";
}

INSTANTIATE_TEST_SUITE_P(
    Orders, DnnlResidual,
    ::testing::Values(ResidualCase{Whole(), false, false}, ResidualCase{Whole(), true, false},
                      ResidualCase{Whole(), false, true}, ResidualCase{Whole(), true, true},
                      ResidualCase{Padded(), false, true}, ResidualCase{Padded(), true, false}),
    [](const ::testing::TestParamInfo<ResidualCase>& info) {
      return Cat("c", info.param.channels) +
             (info.param.residual_first_in_add ? "_AddRY" : "_AddYR") +
             (info.param.residual_after_in_order ? "_residual_later" : "_residual_earlier");
    });

// ResNet's basic block: the skip connection is the block's (blocked) input itself.
TEST(DnnlLayout, ResidualIdentitySkip) {
  for (int64_t c : {16, 40}) {
    ModelBuilder b(12);
    const std::string x = b.Input("x", {1, c, 8, 8});
    const std::string h = b.Node("Relu", {Conv3(b, x, c, c)});
    const std::string y = Conv3(b, b.Node("Relu", {Conv3(b, h, c, c)}), c, c);
    const std::string out = b.Node("Relu", {b.Node("Add", {y, h})});
    b.Output(Conv3(b, out, c, 8));
    compile::IrGraph g = CheckAgainstReference(b, {{1, c, 8, 8}}, Cat("c", c));
    EXPECT_EQ(OpListInside(g), std::vector<std::string>(4, "com.epctx:DnnlConv"));
    ASSERT_EQ(ResidualConvs(g).size(), 1u);
    EXPECT_EQ(IntsAttr(*ResidualConvs(g)[0], "post_ops"), (std::vector<int64_t>{9, 1}));
  }
}

// The residual is the (plain) graph input: one blocked copy of it is both the convolution's input
// and the residual of the blocked layout the fused convolution writes.
TEST(DnnlLayout, ResidualFromPlainGraphInput) {
  ModelBuilder b(13);
  const std::string x = b.Input("x", {1, 24, 6, 6});
  const std::string sum = b.Node("Add", {Conv3(b, x, 24, 24), x});
  b.Output(Conv3(b, sum, 24, 4));
  compile::IrGraph g = CheckAgainstReference(b, {{1, 24, 6, 6}}, "residual from input");
  ASSERT_EQ(ResidualConvs(g).size(), 1u);
  EXPECT_EQ(CountOps(g, "Reorder"), 2);  // the input's copy, and the output's
  EXPECT_EQ(CountOps(g, "Add"), 0);
}

// Activation before the residual: relu(conv) + r, post-ops in that order. The skip value h
// has two readers, so only the second convolution can take the Add.
TEST(DnnlLayout, ActivationThenResidual) {
  ModelBuilder b(14);
  const std::string x = b.Input("x", {1, 16, 6, 5});
  const std::string h = Conv3(b, x, 16, 16);
  const std::string y = b.Node("Relu", {Conv3(b, h, 16, 16)});
  b.Output(Conv3(b, b.Node("Add", {y, h}), 16, 4));
  compile::IrGraph g = CheckAgainstReference(b, {{1, 16, 6, 5}}, "relu then add");
  ASSERT_EQ(ResidualConvs(g).size(), 1u);
  EXPECT_EQ(IntsAttr(*ResidualConvs(g)[0], "post_ops"), (std::vector<int64_t>{1, 9}));
  EXPECT_EQ(CountInnerReorders(g), 0);
}

// Both operands of the Add are single-use conv outputs, one with a fused Relu: the conv first
// in node order takes the Add, with the other (activated) output as its residual.
TEST(DnnlLayout, ResidualIsAnActivatedConvOutput) {
  ModelBuilder b(19);
  const std::string x = b.Input("x", {1, 16, 6, 5});
  const std::string h = Conv3(b, x, 16, 16);
  const std::string r = Conv1(b, h, 16, 16);
  const std::string y = b.Node("Relu", {Conv3(b, h, 16, 16)});
  b.Output(Conv3(b, b.Node("Add", {y, r}), 16, 4));
  compile::IrGraph g = CheckAgainstReference(b, {{1, 16, 6, 5}}, "add of conv and relu(conv)");
  ASSERT_EQ(ResidualConvs(g).size(), 1u);
  EXPECT_EQ(IntsAttr(*ResidualConvs(g)[0], "post_ops"), (std::vector<int64_t>{9}));
  EXPECT_EQ(CountOps(g, "Add") + CountOps(g, "Relu"), 0);
}

// A constant of the output's exact shape added to a convolution.
TEST(DnnlLayout, ResidualConstant) {
  for (int64_t c : {Whole(), Padded()}) {
    ModelBuilder b(15);
    const std::string x = b.Input("x", {1, c, 5, 5});
    const std::string k = b.Weight({1, c, 5, 5}, -1, 1);
    b.Output(Conv3(b, b.Node("Add", {Conv3(b, x, c, c), k}), c, 3));
    CheckAgainstReference(b, {{1, c, 5, 5}}, Cat("constant residual c", c));
  }
}

// Shapes that only broadcast are not a residual: the Add stays and runs on blocked tensors.
TEST(DnnlLayout, BroadcastingAddOfBlockedTensorsIsNotFused) {
  for (int64_t c : {Whole(), Padded()}) {
    ModelBuilder b(16);
    const std::string x = b.Input("x", {2, c, 6, 7});
    const std::string y = Conv3(b, x, c, c);
    const std::string pooled = b.Node("GlobalAveragePool", {y});  // [2, c, 1, 1]
    const std::string gate = Conv1(b, pooled, c, c);
    b.Output(Conv3(b, b.Node("Add", {y, gate}), c, 3));
    compile::IrGraph g = CheckAgainstReference(b, {{2, c, 6, 7}}, Cat("c", c));
    EXPECT_EQ(CountOps(g, "Add"), 1);
    EXPECT_EQ(CountInnerReorders(g), 0);
    EXPECT_EQ(CountOps(g, "DnnlPool"), 1);
  }
}

// Two blocked tensors broadcasting over the batch: [1, C, H, W] + [3, C, H, W].
TEST(DnnlLayout, AddBroadcastingOverBatch) {
  ModelBuilder b(17);
  const int64_t ch = Padded();
  const std::string x1 = b.Input("x1", {1, ch, 5, 6});
  const std::string x2 = b.Input("x2", {3, ch, 5, 6});
  const std::string a = Conv3(b, x1, ch, ch);
  const std::string c = Conv3(b, x2, ch, ch);
  const std::string sum = b.Node("Add", {a, c});
  b.Output(Conv3(b, sum, ch, 3));
  compile::IrGraph g = CheckAgainstReference(b, {{1, ch, 5, 6}, {3, ch, 5, 6}}, "batch bcast");
  EXPECT_EQ(CountInnerReorders(g), 0);
}

// Squeeze-and-excitation: a [N, C, 1, 1] gate (GAP, 1x1 convs, Sigmoid) multiplies the
// feature map, all blocked.
TEST(DnnlLayout, SqueezeExcitationGate) {
  for (int64_t c : {Padded(), 2 * Whole()}) {
    ModelBuilder b(18);
    const std::string x = b.Input("x", {2, c, 6, 6});
    const std::string y = b.Node("Relu", {Conv3(b, x, c, c)});
    const std::string s = b.Node("Relu", {Conv1(b, b.Node("GlobalAveragePool", {y}), c, 8)});
    const std::string gate = b.Node("Sigmoid", {Conv1(b, s, 8, c)});
    b.Output(Conv3(b, b.Node("Mul", {y, gate}), c, 4));
    compile::IrGraph g = CheckAgainstReference(b, {{2, c, 6, 6}}, Cat("SE c", c));
    EXPECT_EQ(CountInnerReorders(g), 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Pooling between convolutions: conv -> conv -> pool -> conv.

struct PoolCase {
  std::string name;
  std::string op;
  std::vector<onnx::AttributeProto> attrs;
  size_t dims = 2;
  bool expect_dnnl = true;  // planned as DnnlPool on the blocked tensor
};

void PrintTo(const PoolCase& k, std::ostream* os) {
  *os << k.name;
}

std::vector<PoolCase> PoolCases() {
  auto ks = [](std::vector<int64_t> v) { return AttrInts("kernel_shape", std::move(v)); };
  auto st = [](std::vector<int64_t> v) { return AttrInts("strides", std::move(v)); };
  auto pads = [](std::vector<int64_t> v) { return AttrInts("pads", std::move(v)); };
  auto ceil = AttrInt("ceil_mode", 1);
  auto cip = [](int64_t v) { return AttrInt("count_include_pad", v); };
  return {
      {"max_k3s2p1", "MaxPool", {ks({3, 3}), st({2, 2}), pads({1, 1, 1, 1})}},
      {"max_k2s2", "MaxPool", {ks({2, 2}), st({2, 2})}},
      {"max_k3s2_ceil", "MaxPool", {ks({3, 3}), st({2, 2}), ceil}},
      {"max_k2s2p1_ceil", "MaxPool", {ks({2, 2}), st({2, 2}), pads({1, 1, 1, 1}), ceil}},
      {"max_k3_dil2_p2",
       "MaxPool",
       {ks({3, 3}), pads({2, 2, 2, 2}), AttrInts("dilations", {2, 2})}},
      {"max_k2s2_dil2_ceil",
       "MaxPool",
       {ks({2, 2}), st({2, 2}), AttrInts("dilations", {2, 2}), ceil}},
      {"max_asym_pads", "MaxPool", {ks({3, 2}), st({2, 1}), pads({0, 1, 2, 0})}},
      {"max_same_upper", "MaxPool", {ks({3, 3}), st({2, 2}), AttrString("auto_pad", "SAME_UPPER")}},
      {"max_same_lower", "MaxPool", {ks({2, 2}), st({2, 2}), AttrString("auto_pad", "SAME_LOWER")}},
      {"max_1d", "MaxPool", {ks({3}), st({2}), pads({1, 1})}, 1},
      {"max_3d", "MaxPool", {ks({2, 2, 2}), st({2, 2, 2})}, 3},
      {"avg_k3s2p1_exclude", "AveragePool", {ks({3, 3}), st({2, 2}), pads({1, 1, 1, 1}), cip(0)}},
      {"avg_k3s2p1_include", "AveragePool", {ks({3, 3}), st({2, 2}), pads({1, 1, 1, 1}), cip(1)}},
      {"avg_k3s2_ceil_exclude", "AveragePool", {ks({3, 3}), st({2, 2}), ceil, cip(0)}},
      {"avg_k2s2p1_ceil_exclude",
       "AveragePool",
       {ks({2, 2}), st({2, 2}), pads({1, 0, 1, 0}), ceil, cip(0)}},
      // Padding counted past the pads: no oneDNN mode, so it runs plain.
      {"avg_k3s2p1_ceil_include",
       "AveragePool",
       {ks({3, 3}), st({2, 2}), pads({1, 1, 1, 1}), ceil, cip(1)},
       2,
       false},
      {"avg_asym_include", "AveragePool", {ks({2, 3}), pads({1, 0, 0, 2}), cip(1)}},
      {"avg_same_upper_exclude",
       "AveragePool",
       {ks({3, 3}), st({2, 2}), AttrString("auto_pad", "SAME_UPPER"), cip(0)}},
      {"avg_same_lower_include",
       "AveragePool",
       {ks({2, 2}), st({2, 2}), AttrString("auto_pad", "SAME_LOWER"), cip(1)}},
      {"avg_1d_include", "AveragePool", {ks({4}), st({3}), pads({2, 1}), cip(1)}, 1},
      {"avg_3d_exclude", "AveragePool", {ks({3, 3, 3}), pads({1, 1, 1, 1, 1, 1}), cip(0)}, 3},
      {"global_avg", "GlobalAveragePool", {}},
      {"global_max", "GlobalMaxPool", {}},
      {"global_avg_3d", "GlobalAveragePool", {}, 3},
      {"global_max_1d", "GlobalMaxPool", {}, 1},
  };
}

class DnnlPoolChain : public ::testing::TestWithParam<std::tuple<PoolCase, int64_t>> {};

TEST_P(DnnlPoolChain, MatchesReferenceKernels) {
  const auto& [k, c] = GetParam();
  const std::vector<int64_t> spatial = k.dims == 1   ? std::vector<int64_t>{13}
                                       : k.dims == 2 ? std::vector<int64_t>{9, 10}
                                                     : std::vector<int64_t>{5, 6, 7};
  std::vector<int64_t> shape{2, 8};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  ModelBuilder b(21);
  const std::string x = b.Input("x", shape);
  const std::string h = b.Node("Relu", {Conv3(b, x, 8, c, k.dims)});
  const std::string y = Conv3(b, h, c, c, k.dims);
  const std::string p = b.Node(k.op, {y}, k.attrs);
  b.Output(Conv3(b, p, c, 5, k.dims));
  compile::IrGraph g = CheckAgainstReference(b, {shape}, k.name);
  EXPECT_EQ(CountOps(g, "DnnlPool"), k.expect_dnnl ? 1 : 0);
  // Not pooled by oneDNN: the conv output is reordered to plain for the reference pool, and the
  // pool's output back to blocked for the convolution after it.
  EXPECT_EQ(CountInnerReorders(g), k.expect_dnnl ? 0 : 2);
  EXPECT_EQ(CountOps(g, "DnnlConv"), 3);
}

INSTANTIATE_TEST_SUITE_P(Pools, DnnlPoolChain,
                         ::testing::Combine(::testing::ValuesIn(PoolCases()),
                                            ::testing::Values(Whole(), Padded())),
                         [](const auto& info) {
                           return Cat(std::get<0>(info.param).name, "_c", std::get<1>(info.param));
                         });

// The classic head: pooling to [N, C, 1, 1], Flatten, Gemm (plain), after a blocked chain.
TEST(DnnlLayout, GlobalPoolFlattenGemmHead) {
  for (int64_t c : {16, 40}) {
    ModelBuilder b(22);
    const std::string x = b.Input("x", {3, 8, 7, 7});
    const std::string y = b.Node("Relu", {Conv3(b, Conv3(b, x, 8, c), c, c)});
    const std::string flat = b.Node("Flatten", {b.Node("GlobalAveragePool", {y})});
    const std::string w = b.Weight({5, c}, -0.3f, 0.3f);
    const std::string bias = b.Weight({5}, -0.3f, 0.3f);
    b.Output(b.Node("Gemm", {flat, w, bias}, {AttrInt("transB", 1)}));
    compile::IrGraph g = CheckAgainstReference(b, {{3, 8, 7, 7}}, Cat("head c", c));
    EXPECT_EQ(CountOps(g, "DnnlPool"), 1);
    EXPECT_EQ(CountInnerReorders(g), 1);  // after the pool, for Flatten
  }
}

// ---------------------------------------------------------------------------------------------
// Concat along channels.

struct ConcatCase {
  std::string name;
  std::vector<int64_t> channels;  // of each input; a negative count: the graph input itself
  int64_t axis = 1;
  int reorders = 0;  // expected Reorder nodes
};

// "c16_24" (channels of each input; "input8" for the graph input), or the case's own name.
std::string ConcatName(const ConcatCase& k) {
  if (!k.name.empty()) return k.name;
  std::string out = "c";
  for (size_t i = 0; i < k.channels.size(); ++i) {
    if (i > 0) out += "_";
    out += k.channels[i] < 0 ? std::string("input8") : std::to_string(k.channels[i]);
  }
  return out;
}

void PrintTo(const ConcatCase& k, std::ostream* os) {
  *os << ConcatName(k);
}

class DnnlConcat : public ::testing::TestWithParam<ConcatCase> {};

TEST_P(DnnlConcat, MatchesReferenceKernels) {
  const ConcatCase& k = GetParam();
  ModelBuilder b(31);
  const std::string x = b.Input("x", {2, 8, 6, 5});
  std::vector<std::string> parts;
  int64_t total = 0;
  for (int64_t ch : k.channels) {
    parts.push_back(ch < 0 ? x : Conv3(b, x, 8, ch));
    total += ch < 0 ? 8 : ch;
  }
  const std::string cat = b.Node("Concat", parts, {AttrInt("axis", k.axis)});
  const int64_t out_channels = k.axis == 1 || k.axis == -3 ? total : k.channels[0];
  b.Output(Conv3(b, cat, out_channels, 4));
  compile::IrGraph g = CheckAgainstReference(b, {{2, 8, 6, 5}}, ConcatName(k));
  EXPECT_EQ(CountOps(g, "Concat"), 1);
  EXPECT_EQ(CountInnerReorders(g), k.reorders);
}

INSTANTIATE_TEST_SUITE_P(
    Concats, DnnlConcat,
    ::testing::Values(
        ConcatCase{"", {Whole(), 2 * Whole()}}, ConcatCase{"", {Whole(), Whole(), Whole()}},
        // The last input may have padding.
        ConcatCase{"", {Whole(), Padded()}}, ConcatCase{"", {2 * Whole(), Whole(), Half()}},
        // A padded input before the last: the concatenation runs plain, and the convolution
        // after it reads a blocked copy of its output.
        ConcatCase{"", {Padded(), Whole()}, 1, 3}, ConcatCase{"", {Half(), Half()}, 1, 3},
        // The plain graph input (8 channels) joins the blocked ones through a Reorder at the
        // graph's edge.
        ConcatCase{"", {Whole(), -1}, 1, 0},
        // Along a spatial axis: not a channel concatenation.
        ConcatCase{"spatial_axis2", {Whole(), Whole()}, 2, 3}),
    [](const auto& info) { return ConcatName(info.param); });

// Axis -3 of a rank-4 Concat is the channel axis; on blocked tensors (physical rank 5) -3 would
// be H, so the planner must rewrite it.
TEST(DnnlLayout, ConcatNegativeChannelAxis) {
  for (const std::vector<int64_t>& channels :
       {std::vector<int64_t>{Whole(), Padded()}, {Whole(), Whole()}}) {
    ModelBuilder b(32);
    const std::string x = b.Input("x", {2, 8, 6, 5});
    const std::string cat =
        b.Node("Concat", {Conv3(b, x, 8, channels[0]), Conv3(b, x, 8, channels[1])},
               {AttrInt("axis", -3)});
    b.Output(Conv3(b, cat, channels[0] + channels[1], 4));
    compile::IrGraph g = CheckAgainstReference(b, {{2, 8, 6, 5}}, "axis -3");
    EXPECT_EQ(CountInnerReorders(g), 0);
  }
}

// DenseNet's Concat -> BatchNormalization -> Relu -> Conv: a blocked channel Concat that only the
// normalization reads becomes one ConcatChannelAffine; read by another node too, it stays.
struct ConcatNormCase {
  std::string name;
  std::vector<int64_t> channels;  // of each concatenated conv output
  bool concat_read_elsewhere = false;
};

// "c16_32", "c16_32_read_elsewhere".
std::string ConcatNormName(const ConcatNormCase& k) {
  std::string out = "c";
  for (size_t i = 0; i < k.channels.size(); ++i) {
    if (i > 0) out += "_";
    out += std::to_string(k.channels[i]);
  }
  return k.concat_read_elsewhere ? out + "_read_elsewhere" : out;
}

void PrintTo(const ConcatNormCase& k, std::ostream* os) {
  *os << ConcatNormName(k);
}

class DnnlConcatNorm : public ::testing::TestWithParam<ConcatNormCase> {};

TEST_P(DnnlConcatNorm, MatchesReferenceKernels) {
  const ConcatNormCase& k = GetParam();
  ModelBuilder b(33);
  const std::string x = b.Input("x", {2, 8, 6, 5});
  std::vector<std::string> parts;
  int64_t total = 0;
  for (int64_t ch : k.channels) {
    parts.push_back(Conv3(b, x, 8, ch));
    total += ch;
  }
  const std::string cat = b.Node("Concat", parts, {AttrInt("axis", 1)});
  const std::string bn = b.Node("BatchNormalization",
                                {cat, b.Weight({total}, 0.5f, 1.5f), b.Weight({total}, -0.5f, 0.5f),
                                 b.Weight({total}, -0.5f, 0.5f), b.Weight({total}, 0.5f, 2.0f)});
  b.Output(Conv1(b, b.Node("Relu", {bn}), total, 4));
  if (k.concat_read_elsewhere) b.Output(Conv1(b, cat, total, 4));
  compile::IrGraph g = CheckAgainstReference(b, {{2, 8, 6, 5}}, ConcatNormName(k));
  EXPECT_EQ(CountOps(g, "ConcatChannelAffine"), k.concat_read_elsewhere ? 0 : 1);
  EXPECT_EQ(CountOps(g, "ChannelAffine"), k.concat_read_elsewhere ? 1 : 0);
  EXPECT_EQ(CountOps(g, "Concat"), k.concat_read_elsewhere ? 1 : 0);
  EXPECT_EQ(CountOps(g, "Relu"), 0);
  EXPECT_EQ(CountInnerReorders(g), 0);
}

INSTANTIATE_TEST_SUITE_P(
    ConcatNorms, DnnlConcatNorm,
    ::testing::Values(ConcatNormCase{"", {Whole(), 2 * Whole()}},
                      // The last input may carry padding lanes, which must stay zero.
                      ConcatNormCase{"", {Whole(), Padded()}},
                      ConcatNormCase{"", {2 * Whole(), Whole(), Half()}},
                      ConcatNormCase{"", {Whole(), 2 * Whole()}, true}),
    [](const auto& info) { return ConcatNormName(info.param); });

// ---------------------------------------------------------------------------------------------
// Element-wise ops on blocked tensors: conv -> op -> conv, C = a whole block (no padding) and a
// block and a half.

struct EltwiseCase {
  std::string name;
  // Builds op(y) for a conv output y of `c` channels.
  std::string (*build)(ModelBuilder& b, const std::string& y, int64_t c);
};

void PrintTo(const EltwiseCase& k, std::ostream* os) {
  *os << k.name;
}

std::vector<float> Ramp(int64_t c, float start, float step) {
  std::vector<float> v(static_cast<size_t>(c));
  for (int64_t i = 0; i < c; ++i) v[static_cast<size_t>(i)] = start + step * static_cast<float>(i);
  return v;
}

std::vector<EltwiseCase> EltwiseCases() {
  using B = ModelBuilder;
  using S = const std::string;
  return {
      {"mul_c11",
       [](B& b, S& y, int64_t c) {
         return b.Node("Mul", {y, b.Constant({c, 1, 1}, Ramp(c, 0.5f, 0.1f))});
       }},
      {"mul_1c11",
       [](B& b, S& y, int64_t c) {
         return b.Node("Mul", {b.Constant({1, c, 1, 1}, Ramp(c, -1.0f, 0.07f)), y});
       }},
      {"mul_scalar",
       [](B& b, S& y, int64_t) {
         return b.Node("Mul", {y, b.Constant({}, {1.7f})});
       }},
      {"mul_scalar_1",
       [](B& b, S& y, int64_t) {
         return b.Node("Mul", {b.Constant({1}, {-0.6f}), y});
       }},
      {"add_c11",
       [](B& b, S& y, int64_t c) {
         return b.Node("Add", {y, b.Constant({c, 1, 1}, Ramp(c, -0.5f, 0.05f))});
       }},
      {"add_1c11_first",
       [](B& b, S& y, int64_t c) {
         return b.Node("Add", {b.Constant({1, c, 1, 1}, Ramp(c, 0.3f, -0.04f)), y});
       }},
      {"add_scalar",
       [](B& b, S& y, int64_t) {
         return b.Node("Add", {y, b.Constant({}, {0.4f})});
       }},
      {"sub_c11",
       [](B& b, S& y, int64_t c) {
         return b.Node("Sub", {y, b.Constant({c, 1, 1}, Ramp(c, 0.2f, 0.03f))});
       }},
      {"sub_from_c11",
       [](B& b, S& y, int64_t c) {
         return b.Node("Sub", {b.Constant({c, 1, 1}, Ramp(c, 0.2f, 0.03f)), y});
       }},
      {"sub_from_scalar",
       [](B& b, S& y, int64_t) {
         return b.Node("Sub", {b.Constant({}, {0.9f}), y});
       }},
      {"div_by_c11",
       [](B& b, S& y, int64_t c) {
         return b.Node("Div", {y, b.Constant({c, 1, 1}, Ramp(c, 0.5f, 0.1f))});
       }},
      {"div_by_1c11",
       [](B& b, S& y, int64_t c) {
         return b.Node("Div", {y, b.Constant({1, c, 1, 1}, Ramp(c, -2.0f, 0.13f))});
       }},
      {"div_by_scalar",
       [](B& b, S& y, int64_t) {
         return b.Node("Div", {y, b.Constant({}, {3.0f})});
       }},
      {"div_c11_by_y",
       [](B& b, S& y, int64_t c) {
         // Kept away from zero so that the reference is finite.
         const std::string pos = b.Node("Add", {b.Node("Abs", {y}), b.Constant({}, {0.5f})});
         return b.Node("Div", {b.Constant({c, 1, 1}, Ramp(c, 0.5f, 0.1f)), pos});
       }},
      {"max_c11",
       [](B& b, S& y, int64_t c) {
         return b.Node("Max", {y, b.Constant({c, 1, 1}, Ramp(c, -0.3f, 0.02f))});
       }},
      {"min_1c11",
       [](B& b, S& y, int64_t c) {
         return b.Node("Min", {b.Constant({1, c, 1, 1}, Ramp(c, 0.3f, -0.02f)), y});
       }},
      {"max_scalar",
       [](B& b, S& y, int64_t) {
         return b.Node("Max", {y, b.Constant({}, {0.1f})});
       }},
      // Two blocked tensors (the op's operand and the conv output), no broadcasting.
      {"mul_two_blocked",
       [](B& b, S& y, int64_t) {
         return b.Node("Mul", {y, b.Node("Tanh", {y})});
       }},
      {"div_two_blocked",
       [](B& b, S& y, int64_t) {
         return b.Node("Div", {y, b.Node("Add", {b.Node("Abs", {y}), b.Constant({}, {1.0f})})});
       }},
      // Unary ops: those keeping zero stay blocked whatever the channel count; the others only
      // without padding.
      {"abs", [](B& b, S& y, int64_t) { return b.Node("Abs", {y}); }},
      {"neg", [](B& b, S& y, int64_t) { return b.Node("Neg", {y}); }},
      {"sqrt_abs", [](B& b, S& y, int64_t) { return b.Node("Sqrt", {b.Node("Abs", {y})}); }},
      {"sigmoid_after_mul",
       [](B& b, S& y, int64_t) {
         return b.Node("Sigmoid", {b.Node("Mul", {y, b.Constant({}, {2.0f})})});
       }},
      {"exp", [](B& b, S& y, int64_t) { return b.Node("Exp", {b.Node("Neg", {y})}); }},
      {"softplus", [](B& b, S& y, int64_t) { return b.Node("Softplus", {b.Node("Neg", {y})}); }},
      {"hardsigmoid",
       [](B& b, S& y, int64_t) { return b.Node("HardSigmoid", {b.Node("Neg", {y})}); }},
      {"reciprocal",
       [](B& b, S& y, int64_t) {
         return b.Node("Reciprocal", {b.Node("Add", {b.Node("Abs", {y}), b.Constant({}, {1.0f})})});
       }},
      {"log",
       [](B& b, S& y, int64_t) {
         return b.Node("Log", {b.Node("Add", {b.Node("Abs", {y}), b.Constant({}, {0.5f})})});
       }},
      {"clip_above_zero_after_neg",
       [](B& b, S& y, int64_t) {
         return b.Node("Clip",
                       {b.Node("Neg", {y}), b.Constant({}, {0.1f}), b.Constant({}, {0.5f})});
       }},
      {"clip_around_zero_after_neg",
       [](B& b, S& y, int64_t) {
         return b.Node("Clip",
                       {b.Node("Neg", {y}), b.Constant({}, {-0.2f}), b.Constant({}, {0.5f})});
       }},
      {"selu_after_neg", [](B& b, S& y, int64_t) { return b.Node("Selu", {b.Node("Neg", {y})}); }},
      {"thresholded_relu_neg_alpha",
       [](B& b, S& y, int64_t) {
         return b.Node("ThresholdedRelu", {b.Node("Neg", {y})}, {AttrFloat("alpha", -0.2f)});
       }},
  };
}

class DnnlEltwise : public ::testing::TestWithParam<std::tuple<EltwiseCase, int64_t>> {};

TEST_P(DnnlEltwise, MatchesReferenceKernels) {
  const auto& [k, c] = GetParam();
  ModelBuilder b(41);
  const std::string x = b.Input("x", {2, 8, 6, 7});
  const std::string y = Conv3(b, x, 8, c);
  b.Output(Conv3(b, k.build(b, y, c), c, 5));
  compile::IrGraph g = CheckAgainstReference(b, {{2, 8, 6, 7}}, k.name);
  EXPECT_EQ(CountOps(g, "DnnlConv"), 2);
}

INSTANTIATE_TEST_SUITE_P(Ops, DnnlEltwise,
                         ::testing::Combine(::testing::ValuesIn(EltwiseCases()),
                                            ::testing::Values(Whole(), Padded())),
                         [](const auto& info) {
                           return Cat(std::get<0>(info.param).name, "_c", std::get<1>(info.param));
                         });

// The per-channel constants of a blocked op are re-laid out to [1, C/block, 1, 1, block]
// (padding 0, or 1 for a divisor), and the op stays between the convolutions without a Reorder.
TEST(DnnlLayout, PerChannelConstantsAreBlocked) {
  const int64_t c = Padded(), block = PlannedChannelBlock();
  for (const char* op : {"Mul", "Add", "Sub", "Div"}) {
    ModelBuilder b(42);
    const std::string x = b.Input("x", {1, 8, 5, 5});
    const std::string y = Conv3(b, x, 8, c);
    const std::string z = b.Node(op, {y, b.Constant({c, 1, 1}, Ramp(c, 0.5f, 0.1f))});
    b.Output(Conv3(b, z, c, 3));
    compile::IrGraph g = CheckAgainstReference(b, {{1, 8, 5, 5}}, op);
    EXPECT_EQ(CountInnerReorders(g), 0) << op;
    for (const compile::IrNode& n : g.nodes) {
      if (n.op_type != op) continue;
      const compile::IrValue& k = g.values[static_cast<size_t>(n.inputs[1])];
      ASSERT_TRUE(k.is_constant()) << op;
      ASSERT_EQ(k.shape, (std::vector<int64_t>{1, 2, 1, 1, block})) << op;
      const float* v = reinterpret_cast<const float*>(k.constant->bytes.data());
      EXPECT_EQ(v[c - 1], 0.5f + 0.1f * static_cast<float>(c - 1)) << op;
      for (int64_t i = c; i < 2 * block; ++i) {
        EXPECT_EQ(v[i], std::string(op) == "Div" ? 1.0f : 0.0f) << op << " lane " << i;
      }
    }
  }
}

// Per-channel constants and channel Concat on 1-D and 3-D activations: the constants' channel
// axis sits elsewhere ([C, 1] / [1, C, 1] and [C, 1, 1, 1] / [1, C, 1, 1, 1]).
TEST(DnnlLayout, OneAndThreeDimensionalBlockedOps) {
  for (size_t dims : {1, 3}) {
    for (bool leading_one : {false, true}) {
      ModelBuilder b(46);
      std::vector<int64_t> shape{2, 8};
      shape.resize(2 + dims, 5);
      const std::string x = b.Input("x", shape);
      const int64_t c = Padded();
      const std::string y = Conv3(b, x, 8, c, dims);
      std::vector<int64_t> k_shape(dims + 1, 1);
      k_shape[0] = c;
      if (leading_one) k_shape.insert(k_shape.begin(), 1);
      const std::string m = b.Node("Mul", {y, b.Constant(k_shape, Ramp(c, 0.5f, 0.1f))});
      const std::string a = b.Node("Add", {b.Constant(k_shape, Ramp(c, -1.0f, 0.08f)), m});
      const std::string cat =
          b.Node("Concat", {Conv3(b, x, 8, Whole(), dims), a}, {AttrInt("axis", 1)});
      b.Output(Conv3(b, cat, Whole() + c, 4, dims));
      compile::IrGraph g =
          CheckAgainstReference(b, {shape}, Cat(dims, "-D constants of rank ", k_shape.size()));
      EXPECT_EQ(CountInnerReorders(g), 0) << dims << "-D";
      EXPECT_EQ(CountOps(g, "DnnlConv"), 3) << dims << "-D";
    }
  }
}

// Opset 10: Clip's bounds are attributes. Fused into the first conv; on the second conv's
// output (read twice, so not fused) the bounds exclude 0 and the channels (a block and a half)
// are padded, so that Clip runs on a plain copy.
TEST(DnnlLayout, ClipWithAttributeBoundsOpset10) {
  const int64_t c = Padded();
  ModelBuilder b(47, 10);
  const std::string x = b.Input("x", {1, 8, 9, 10});
  const std::string y = Conv3(b, x, 8, c);
  const std::string c1 = b.Node("Clip", {y}, {AttrFloat("min", 0.1f), AttrFloat("max", 0.5f)});
  const std::string z = Conv3(b, c1, c, c);
  const std::string c2 = b.Node("Clip", {z}, {AttrFloat("min", 0.1f), AttrFloat("max", 0.5f)});
  b.Output(Conv3(b, b.Node("Add", {c2, z}), c, 4));
  compile::IrGraph g = CheckAgainstReference(b, {{1, 8, 9, 10}}, "opset 10 clip");
  EXPECT_EQ(CountOps(g, "Clip"), 1);
  EXPECT_EQ(IntsAttr(g.nodes[0], "post_ops"), (std::vector<int64_t>{2}));
  EXPECT_EQ(FloatsAttr(g.nodes[0], "post_op_alpha"), (std::vector<float>{0.1f}));
  EXPECT_EQ(FloatsAttr(g.nodes[0], "post_op_beta"), (std::vector<float>{0.5f}));
}

// Sigmoid maps the zero padding to 0.5: with padded channels (a block
// and a half) it must not stay blocked (or, fused
// into the convolution, the next convolution must ignore the padding lanes).
TEST(DnnlLayout, SigmoidOnPaddedChannelsDoesNotLeak) {
  const int64_t c = Padded();
  // Fused: conv -> Sigmoid post-op -> conv reads blocked (padding 0.5, zero filter taps).
  {
    ModelBuilder b(43);
    const std::string x = b.Input("x", {1, 8, 6, 6});
    const std::string s = b.Node("Sigmoid", {Conv3(b, x, 8, c)});
    b.Output(Conv3(b, s, c, 5));
    compile::IrGraph g = CheckAgainstReference(b, {{1, 8, 6, 6}}, "fused sigmoid");
    EXPECT_EQ(OpListInside(g), std::vector<std::string>(2, "com.epctx:DnnlConv"));
  }
  // Stand-alone (the conv output has a second reader): the Sigmoid runs on a plain copy.
  {
    ModelBuilder b(44);
    const std::string x = b.Input("x", {1, 8, 6, 6});
    const std::string y = Conv3(b, x, 8, c);
    const std::string s = b.Node("Sigmoid", {y});
    b.Output(Conv3(b, b.Node("Add", {s, y}), c, 5));
    compile::IrGraph g = CheckAgainstReference(b, {{1, 8, 6, 6}}, "stand-alone sigmoid");
    for (const compile::IrNode& n : g.nodes) {
      if (n.op_type != "Sigmoid") continue;
      EXPECT_EQ(g.values[static_cast<size_t>(n.outputs[0])].shape.size(), 4u)
          << "Sigmoid wrote a blocked (rank 5) tensor of " << c << " channels";
    }
  }
  // The padded lanes after a fused Sigmoid flow through pooling, an Add and a depthwise conv.
  {
    ModelBuilder b(45);
    const std::string x = b.Input("x", {2, 8, 7, 7});
    const std::string s = b.Node("Sigmoid", {Conv3(b, x, 8, c)});
    const std::string p = b.Node("MaxPool", {s}, {AttrInts("kernel_shape", {2, 2})});
    const std::string d = b.Conv(p, c, c, {3, 3}, {AttrInts("pads", {1, 1, 1, 1})}, true, c);
    const std::string sum = b.Node("Add", {d, p});
    b.Output(b.Node("GlobalAveragePool", {Conv3(b, sum, c, c)}));
    CheckAgainstReference(b, {{2, 8, 7, 7}}, "padding through pool/add/depthwise");
  }
}

// ---------------------------------------------------------------------------------------------
// Graph outputs and mixed readers.

// A graph output taken inside the blocked chain: the value stays plain, the chain goes on.
TEST(DnnlLayout, GraphOutputInsideChain) {
  ModelBuilder b(51);
  const std::string x = b.Input("x", {1, 8, 6, 6});
  const std::string a = Conv3(b, x, 8, Padded());
  const std::string r = b.Node("Relu", {a});
  const std::string c = Conv3(b, r, Padded(), Whole());
  const std::string p = b.Node("MaxPool", {c}, {AttrInts("kernel_shape", {2, 2})});
  const std::string d = Conv3(b, p, Whole(), 8);
  b.Output(r);  // a fused activation's output
  b.Output(p);  // a pooling output
  b.Output(d);
  compile::IrGraph g = CheckAgainstReference(b, {{1, 8, 6, 6}}, "outputs inside the chain");
  for (int o : g.outputs) {
    EXPECT_EQ(g.values[static_cast<size_t>(o)].shape.size(), 4u) << "graph outputs are plain";
  }
}

// One conv output read by a DnnlConv (blocked) and by Flatten and Reshape (plain): one Reorder
// serves both plain readers.
TEST(DnnlLayout, ValueReadBlockedAndPlain) {
  for (int64_t c : {Whole(), Padded()}) {
    ModelBuilder b(52);
    const std::string x = b.Input("x", {2, 8, 4, 5});
    const std::string y = Conv3(b, x, 8, c);
    b.Output(Conv3(b, y, c, 4));
    b.Output(b.Node("Flatten", {y}));
    b.Output(b.Node("Reshape", {y, b.Int64Constant({2}, {2, -1})}));
    compile::IrGraph g = CheckAgainstReference(b, {{2, 8, 4, 5}}, Cat("blocked and plain c", c));
    EXPECT_EQ(CountInnerReorders(g), 1);
    EXPECT_EQ(CountOps(g, "DnnlConv"), 2);
  }
}

}  // namespace
}  // namespace epctx::testing::dnnl
