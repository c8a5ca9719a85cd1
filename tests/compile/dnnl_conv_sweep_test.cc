// Convolutions lowered to oneDNN (DnnlConv, post-ops, channel-blocked activations) give the
// results of the reference ONNX kernels: a sweep over 1-D/2-D/3-D geometry, channel counts that
// are and are not multiples of the channel block (16, or 8 on AVX2), groups (1, depthwise, in
// between), strides, dilations, explicit asymmetric pads, auto_pad, bias, batch and every fused
// activation. Each case runs twice: the convolution alone (plain in, plain out), and between two
// others so that it reads and writes the blocked layout.
#include <gtest/gtest.h>

#include <random>

#include "compile/dnnl_graph_helpers.h"
#include "compile/passes/passes.h"

namespace epctx::testing::dnnl {
namespace {

enum class Act {
  kNone,
  kRelu,
  kLeakyRelu,
  kClipAround0,  // Clip(-0.4, 0.3): f(0) = 0
  kClipAbove0,   // Clip(0.05, 0.3): bounds exclude 0, f(0) != 0
  kClipBelow0,   // Clip(-0.3, -0.05)
  kClipMaxOnly,  // Clip(x, "", 0.25)
  kSigmoid,
  kTanh,
  kHardSwish,
  kElu,
  kSilu,         // Mul(y, Sigmoid(y))
  kSiluSwapped,  // Mul(Sigmoid(y), y)
};
constexpr Act kAllActs[] = {
    Act::kNone,       Act::kRelu,        Act::kLeakyRelu,  Act::kClipAround0, Act::kClipAbove0,
    Act::kClipBelow0, Act::kClipMaxOnly, Act::kSigmoid,    Act::kTanh,        Act::kHardSwish,
    Act::kElu,        Act::kSilu,        Act::kSiluSwapped};

const char* ActName(Act a) {
  switch (a) {
    case Act::kNone:
      return "none";
    case Act::kRelu:
      return "Relu";
    case Act::kLeakyRelu:
      return "LeakyRelu";
    case Act::kClipAround0:
      return "ClipAround0";
    case Act::kClipAbove0:
      return "ClipAbove0";
    case Act::kClipBelow0:
      return "ClipBelow0";
    case Act::kClipMaxOnly:
      return "ClipMaxOnly";
    case Act::kSigmoid:
      return "Sigmoid";
    case Act::kTanh:
      return "Tanh";
    case Act::kHardSwish:
      return "HardSwish";
    case Act::kElu:
      return "Elu";
    case Act::kSilu:
      return "SiLU";
    case Act::kSiluSwapped:
      return "SiLUswapped";
  }
  return "?";
}

// The post-op list (kinds of exec/kernels/onednn/post_ops.h) the activation must become.
std::vector<int64_t> ExpectedPostOps(Act a) {
  switch (a) {
    case Act::kNone:
      return {};
    case Act::kRelu:
    case Act::kLeakyRelu:
      return {1};
    case Act::kClipAround0:
    case Act::kClipAbove0:
    case Act::kClipBelow0:
    case Act::kClipMaxOnly:
      return {2};
    case Act::kSigmoid:
      return {3};
    case Act::kSilu:
    case Act::kSiluSwapped:
      return {4};
    case Act::kHardSwish:
      return {5};
    case Act::kTanh:
      return {6};
    case Act::kElu:
      return {11};
  }
  return {};
}

std::string AddActivation(ModelBuilder& b, const std::string& y, Act a) {
  auto clip = [&](const std::string& lo, float hi) {
    return b.Node("Clip", {y, lo, b.Constant({}, {hi})});
  };
  switch (a) {
    case Act::kNone:
      return y;
    case Act::kRelu:
      return b.Node("Relu", {y});
    case Act::kLeakyRelu:
      return b.Node("LeakyRelu", {y}, {AttrFloat("alpha", 0.1f)});
    case Act::kClipAround0:
      return clip(b.Constant({}, {-0.4f}), 0.3f);
    case Act::kClipAbove0:
      return clip(b.Constant({}, {0.05f}), 0.3f);
    case Act::kClipBelow0:
      return clip(b.Constant({}, {-0.3f}), -0.05f);
    case Act::kClipMaxOnly:
      return clip("", 0.25f);
    case Act::kSigmoid:
      return b.Node("Sigmoid", {y});
    case Act::kTanh:
      return b.Node("Tanh", {y});
    case Act::kHardSwish:
      return b.Node("HardSwish", {y});
    case Act::kElu:
      return b.Node("Elu", {y}, {AttrFloat("alpha", 0.8f)});
    case Act::kSilu:
      return b.Node("Mul", {y, b.Node("Sigmoid", {y})});
    case Act::kSiluSwapped: {
      const std::string s = b.Node("Sigmoid", {y});
      return b.Node("Mul", {s, y});
    }
  }
  return y;
}

struct ConvCase {
  int64_t n = 1, c = 16, m = 16, group = 1;
  std::vector<int64_t> in;      // spatial input dims (1 to 3 of them)
  std::vector<int64_t> kernel;  // one per spatial dim
  int64_t stride = 1, dilation = 1;
  std::vector<int64_t> pads;  // explicit [begin..., end...], or empty
  std::string auto_pad;       // empty: NOTSET
  bool bias = true;
  Act act = Act::kNone;
  bool chained = false;  // between a 1x1 conv and a 3x3 conv, so it reads and writes blocked

  ConvCase& Batch(int64_t v) { return n = v, *this; }
  ConvCase& Group(int64_t v) { return group = v, *this; }
  ConvCase& Stride(int64_t v) { return stride = v, *this; }
  ConvCase& Dilation(int64_t v) { return dilation = v, *this; }
  ConvCase& Pads(std::vector<int64_t> v) { return pads = std::move(v), *this; }
  ConvCase& AutoPad(std::string v) { return auto_pad = std::move(v), *this; }
  ConvCase& NoBias() { return bias = false, *this; }
  ConvCase& With(Act v) { return act = v, *this; }
};

ConvCase K(int64_t c, int64_t m, std::vector<int64_t> in, std::vector<int64_t> kernel) {
  ConvCase k;
  k.c = c;
  k.m = m;
  k.in = std::move(in);
  k.kernel = std::move(kernel);
  return k;
}

std::string Join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) s += 'x';
    s += std::to_string(v[i]);
  }
  return s;
}

std::string CaseName(const ConvCase& k) {
  std::string s = std::to_string(k.in.size());
  s += "d_n" + std::to_string(k.n);
  s += "_c" + std::to_string(k.c);
  s += "_m" + std::to_string(k.m);
  s += "_g" + std::to_string(k.group);
  s += "_in" + Join(k.in);
  s += "_k" + Join(k.kernel);
  s += "_s" + std::to_string(k.stride);
  s += "_d" + std::to_string(k.dilation);
  if (!k.pads.empty()) s += "_p" + Join(k.pads);
  if (!k.auto_pad.empty()) s += "_" + k.auto_pad;
  s += k.bias ? "_bias_" : "_nobias_";
  s += ActName(k.act);
  s += k.chained ? "_chained" : "_alone";
  return s;
}

void PrintTo(const ConvCase& k, std::ostream* os) {
  *os << CaseName(k);
}

// Hand-picked cases: each names one thing that could go wrong.
std::vector<ConvCase> NamedCases() {
  std::vector<ConvCase> cases;
  auto add = [&](const ConvCase& k) { cases.push_back(k); };
  const std::vector<int64_t> in1{17}, in2{10, 9}, in3{6, 5, 7};
  const std::vector<int64_t> k1{3}, k2{3, 3}, k3{3, 3, 3};
  const std::vector<int64_t> p1{1, 1}, p2{1, 1, 1, 1}, p3{1, 1, 1, 1, 1, 1};
  // Channel counts around the 16-channel block, 2-D, 3x3, pad 1.
  for (int64_t c : {3, 8, 16, 24, 40, 64}) {
    for (int64_t m : {8, 16, 24, 40, 64}) {
      if ((c + m) % 3 != 0 && c != 3) continue;  // a spread, not the full product
      add(K(c, m, in2, k2).Pads(p2));
    }
  }
  // 1-D and 3-D with padded and unpadded channel counts.
  for (int64_t c : {3, 24, 64}) {
    add(K(c, 40, in1, k1).Pads(p1));
    add(K(c, 16, in3, k3).Pads(p3));
  }
  // Depthwise (group = C), with multiplier 1 and 2, every rank.
  for (int64_t c : {3, 8, 16, 24, 40, 64}) add(K(c, c, in2, k2).Group(c).Pads(p2));
  add(K(24, 48, in2, k2).Group(24).Stride(2).Pads(p2));
  add(K(40, 40, in1, {5}).Group(40).Pads({2, 2}));
  add(K(16, 16, in3, k3).Group(16).Pads(p3));
  // 1 < group < C.
  add(K(8, 16, in2, k2).Group(2).Pads(p2));
  add(K(24, 40, in2, k2).Group(8).Pads(p2));
  add(K(24, 24, in2, {1, 1}).Group(3));
  add(K(64, 64, in2, k2).Group(4).Pads(p2));
  add(K(64, 24, in1, k1).Group(8).Pads(p1));
  add(K(40, 16, in3, {1, 3, 3}).Group(8).Pads({0, 1, 1, 0, 1, 1}));
  // Strides, dilations, asymmetric pads, auto_pad.
  add(K(16, 24, in2, k2).Stride(2).Pads(p2));
  add(K(24, 16, in2, k2).Dilation(2).Pads({2, 2, 2, 2}));
  add(K(8, 40, in2, k2).Stride(2).Dilation(2).Pads({0, 2, 2, 1}));
  add(K(16, 16, in2, k2).Pads({0, 1, 2, 0}));
  add(K(40, 24, in1, {4}).Pads({3, 0}));
  add(K(3, 16, in3, {2, 3, 2}).Pads({1, 0, 0, 0, 2, 1}));
  for (const char* ap : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    add(K(16, 24, in2, {4, 3}).Stride(2).AutoPad(ap));
    add(K(24, 16, in1, {2}).AutoPad(ap));
    add(K(8, 8, in3, {3, 2, 3}).Group(8).Stride(2).AutoPad(ap));
  }
  // 1x1 with padding (the border is bias only), stride larger than the kernel, a kernel
  // larger than the input.
  add(K(16, 16, in2, {1, 1}).Pads(p2));
  add(K(24, 40, in2, {1, 1}).Stride(2));
  add(K(16, 8, {5, 4}, {7, 7}).Pads({3, 3, 3, 3}));
  // Bias absent, batch 3.
  add(K(24, 24, in2, k2).Pads(p2).NoBias());
  add(K(16, 40, in2, k2).Batch(3).Stride(2).Pads(p2));
  add(K(24, 24, in1, k1).Batch(3).Group(24).Pads(p1).NoBias());
  // Every activation on a padded (24) and an unpadded (16) output channel count, and on a
  // depthwise convolution.
  for (Act a : kAllActs) {
    add(K(16, 24, in2, k2).Pads(p2).With(a));
    add(K(8, 16, in2, k2).Pads(p2).With(a));
    add(K(40, 40, in2, k2).Group(40).Pads(p2).With(a));
  }
  // Channel counts padded in both blocks (16 and AVX2's 8), so that the blocked chain carries
  // padding lanes on every CPU: plain, depthwise, 1-D and 3-D, and every activation.
  add(K(12, 20, in2, k2).Pads(p2));
  add(K(20, 12, in2, k2).Pads(p2));
  add(K(20, 20, in2, k2).Group(20).Pads(p2));
  add(K(20, 12, in1, k1).Pads(p1));
  add(K(12, 20, in3, k3).Pads(p3));
  for (Act a : kAllActs) add(K(16, 20, in2, k2).Pads(p2).With(a));
  return cases;
}

// Seeded random cases over the same axes, for combinations nobody thought of.
std::vector<ConvCase> RandomCases(int count) {
  std::mt19937 rng(2024);
  auto pick = [&](auto const& options) {
    return options[std::uniform_int_distribution<size_t>(0, std::size(options) - 1)(rng)];
  };
  const int64_t channels[] = {3, 8, 16, 24, 40, 64};
  struct Grouped {
    int64_t c, m, g;
  };
  const Grouped grouped[] = {{8, 16, 2},  {8, 24, 4},  {16, 16, 4}, {24, 40, 8}, {24, 16, 2},
                             {40, 40, 5}, {64, 64, 4}, {64, 24, 8}, {16, 64, 2}, {40, 16, 8}};
  std::vector<ConvCase> cases;
  while (static_cast<int>(cases.size()) < count) {
    ConvCase k;
    const int dims = std::uniform_int_distribution<int>(1, 3)(rng);
    k.in = dims == 1   ? std::vector<int64_t>{15}
           : dims == 2 ? std::vector<int64_t>{9, 8}
                       : std::vector<int64_t>{5, 6, 4};
    const int group_mode = std::uniform_int_distribution<int>(0, 2)(rng);
    if (group_mode == 0) {
      k.c = pick(channels);
      k.m = pick(channels);
    } else if (group_mode == 1) {
      k.c = pick(channels);
      k.m = k.c * pick(std::vector<int64_t>{1, 2});
      k.group = k.c;
    } else {
      Grouped g = pick(grouped);
      k.c = g.c;
      k.m = g.m;
      k.group = g.g;
    }
    for (int i = 0; i < dims; ++i) k.kernel.push_back(pick(std::vector<int64_t>{1, 2, 3, 5}));
    k.stride = pick(std::vector<int64_t>{1, 2});
    k.dilation = pick(std::vector<int64_t>{1, 2});
    const int pad_mode = std::uniform_int_distribution<int>(0, 5)(rng);
    if (pad_mode == 1 || pad_mode == 2) {
      for (int i = 0; i < 2 * dims; ++i) {
        k.pads.push_back(std::uniform_int_distribution<int64_t>(0, 2)(rng));
      }
      if (pad_mode == 1) {
        for (size_t i = 0; i < k.in.size(); ++i) k.pads[k.in.size() + i] = k.pads[i];
      }
    } else if (pad_mode >= 3) {
      k.auto_pad = pick(std::vector<std::string>{"SAME_UPPER", "SAME_LOWER", "VALID"});
    }
    k.bias = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    k.n = pick(std::vector<int64_t>{1, 3});
    k.act = pick(kAllActs);
    // Keep only cases with an output of at least one element per dim.
    bool ok = true;
    for (size_t i = 0; i < k.in.size(); ++i) {
      const int64_t span = (k.kernel[i] - 1) * k.dilation + 1;
      const int64_t pads = k.pads.empty() ? 0 : k.pads[i] + k.pads[k.in.size() + i];
      if (k.auto_pad.rfind("SAME", 0) != 0 && span > k.in[i] + pads) ok = false;
    }
    if (ok) cases.push_back(k);
  }
  return cases;
}

std::vector<ConvCase> AllCases() {
  std::vector<ConvCase> base = NamedCases();
  for (const ConvCase& k : RandomCases(80)) base.push_back(k);
  std::vector<ConvCase> out;
  for (ConvCase k : base) {
    k.chained = false;
    out.push_back(k);
    k.chained = true;
    out.push_back(k);
  }
  return out;
}

// The implementation of each DnnlConv's kernel, made and prepared as a session makes them; an
// unknown input dim is taken as `unknown_dim`.
std::vector<std::string> ConvImplementations(const compile::IrGraph& g, int64_t unknown_dim = 1) {
  std::vector<std::string> out;
  for (const compile::IrNode& n : g.nodes) {
    if (n.op_type != "DnnlConv") continue;
    exec::Attributes attrs = g.AttributesOf(n);
    std::vector<Tensor> views;
    auto kernel = exec::KernelRegistry::Global().Create(g.NodeInfoOf(n, attrs, views));
    EXPECT_TRUE(kernel.ok()) << kernel.status().ToString();
    if (!kernel.ok()) continue;
    std::vector<int64_t> shape = g.values[static_cast<size_t>(n.inputs[0])].shape;
    for (int64_t& d : shape) d = d < 0 ? unknown_dim : d;
    const std::vector<int64_t>* shapes[] = {&shape};
    (*kernel)->Prepare(shapes, 1);
    out.push_back(Cat((*kernel)->implementation(), " (", n.name, ": src_layout ",
                      IntAttrOr(n, "src_layout", 0), ", dst_layout ", IntAttrOr(n, "dst_layout", 0),
                      ", input ", ::testing::PrintToString(shape), ")"));
  }
  return out;
}

class DnnlConvSweep : public ::testing::TestWithParam<ConvCase> {};

TEST_P(DnnlConvSweep, MatchesReferenceKernels) {
  const ConvCase& k = GetParam();
  const size_t dims = k.in.size();
  ModelBuilder b(static_cast<uint32_t>(std::hash<std::string>()(CaseName(k))));
  std::vector<int64_t> x_shape{k.n, k.c};
  x_shape.insert(x_shape.end(), k.in.begin(), k.in.end());
  const std::string x = b.Input("x", x_shape);
  std::string h = x;
  if (k.chained) h = b.Conv(x, k.c, k.c, std::vector<int64_t>(dims, 1));
  std::vector<onnx::AttributeProto> attrs{
      AttrInts("strides", std::vector<int64_t>(dims, k.stride)),
      AttrInts("dilations", std::vector<int64_t>(dims, k.dilation))};
  if (!k.pads.empty()) attrs.push_back(AttrInts("pads", k.pads));
  if (!k.auto_pad.empty()) attrs.push_back(AttrString("auto_pad", k.auto_pad));
  std::string y = AddActivation(b, b.Conv(h, k.c, k.m, k.kernel, attrs, k.bias, k.group), k.act);
  if (k.chained) {
    y = b.Conv(y, k.m, 6, std::vector<int64_t>(dims, 3),
               {AttrInts("pads", std::vector<int64_t>(2 * dims, 1))});
  }
  b.Output(y);

  auto graph = ImportGraph(b);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  Tensor input = RandomTensor(x_shape, b.rng());
  const std::vector<Tensor> before = Evaluate(*graph, {input});
  ASSERT_EQ(before.size(), 1u);
  auto stats = compile::RunAllPasses(*graph);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();

  // Every conv is a DnnlConv, every activation a post-op, and every DnnlConv reads and writes
  // layouts oneDNN convolves directly (Reorders around them otherwise; the graph output is
  // plain): its reference implementation is hundreds of times slower.
  const int convs = k.chained ? 3 : 1;
  std::vector<const compile::IrNode*> conv_nodes;
  for (const compile::IrNode& n : graph->nodes) {
    if (n.op_type == "DnnlConv") {
      conv_nodes.push_back(&n);
    } else {
      EXPECT_EQ(n.domain + ":" + n.op_type, "com.epctx:Reorder");
    }
  }
  ASSERT_EQ(conv_nodes.size(), static_cast<size_t>(convs))
      << ::testing::PrintToString(OpList(*graph));
  EXPECT_EQ(IntsAttr(*conv_nodes[k.chained ? 1 : 0], "post_ops"), ExpectedPostOps(k.act));
  for (const std::string& implementation : ConvImplementations(*graph)) {
    EXPECT_EQ(implementation.find("onednn:ref"), std::string::npos) << implementation;
  }
  const compile::IrValue& out = graph->values[static_cast<size_t>(graph->outputs[0])];
  EXPECT_EQ(out.shape.size(), x_shape.size()) << "graph outputs are plain";

  const std::vector<Tensor> after = Evaluate(*graph, {input});
  ASSERT_EQ(after.size(), 1u);
  ExpectMatches(after[0], before[0], kRel, CaseName(k));
}

INSTANTIATE_TEST_SUITE_P(Cases, DnnlConvSweep, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<ConvCase>& info) {
                           return std::to_string(info.index) + "_" + CaseName(info.param);
                         });

// Input dims unknown at compile (batch and image size): the layouts are still chosen by what
// oneDNN convolves directly, on the dims the packing assumes. A grouped convolution of 4
// channels per group (ResNeXt's) has no JIT kernel in the blocked layout; with the dims unknown
// the plan used to take blocked-to-blocked and the kernel oneDNN's reference implementation.
TEST(DnnlConvLowering, UnknownDimsStillAvoidTheReferenceImplementation) {
  ModelBuilder b(33);
  const std::string x = b.Input("x", {-1, 64, -1, -1});
  const std::string a =
      b.Node("Relu", {b.Conv(x, 64, 64, {3, 3}, {AttrInts("pads", {1, 1, 1, 1})})});
  const std::string g =
      b.Node("Relu", {b.Conv(a, 64, 64, {3, 3}, {AttrInts("pads", {1, 1, 1, 1})}, true, 16)});
  b.Output(b.Conv(g, 64, 32, {1, 1}));
  auto graph = ImportGraph(b);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  Tensor input = RandomTensor({2, 64, 9, 7}, b.rng());
  const std::vector<Tensor> before = Evaluate(*graph, {input});
  ASSERT_EQ(before.size(), 1u);
  ASSERT_TRUE(compile::RunAllPasses(*graph).ok());
  EXPECT_EQ(CountOps(*graph, "DnnlConv"), 3);
  for (const std::string& implementation : ConvImplementations(*graph, 9)) {
    EXPECT_EQ(implementation.find("onednn:ref"), std::string::npos) << implementation;
  }
  const std::vector<Tensor> after = Evaluate(*graph, {input});
  ASSERT_EQ(after.size(), 1u);
  ExpectMatches(after[0], before[0], kRel, "unknown dims");
}

// A statically shaped input whose rows are wider than oneDNN's convolutions are made for
// (onednn::kMaxConvOutputWidth, 2^21): the narrow convolution is lowered, the wide one stays
// ONNX Conv (run by the reference kernel), and the graph computes what it did.
TEST(DnnlConvLowering, RowsWiderThanOneDnnTakesStayOnnxConv) {
  for (const int64_t width : {int64_t{64}, (int64_t{1} << 21) + 8}) {
    ModelBuilder b(17);
    const std::vector<int64_t> shape{1, 2, 1, width};
    b.Output(b.Conv(b.Input("x", shape), 2, 3, {1, 3}));
    auto graph = ImportGraph(b);
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    Tensor input = RandomTensor(shape, b.rng());
    const std::vector<Tensor> before = Evaluate(*graph, {input});
    ASSERT_EQ(before.size(), 1u);
    auto stats = compile::RunAllPasses(*graph);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(OpList(*graph), std::vector<std::string>{width > 64 ? "Conv" : "com.epctx:DnnlConv"})
        << "width " << width;
    const std::vector<Tensor> after = Evaluate(*graph, {input});
    ASSERT_EQ(after.size(), 1u);
    ExpectMatches(after[0], before[0], kRel, Cat("width ", width));
  }
}

}  // namespace
}  // namespace epctx::testing::dnnl
