// The optimization passes change the graph's structure as intended and leave its results equal
// (to float rounding) to the unoptimized graph, evaluated node by node with the same kernels.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "compile/passes/passes.h"
#include "exec/kernels/elementwise/element_types.h"
#include "exec/kernels/onednn/post_ops.h"

namespace epctx::compile {
namespace {

std::shared_ptr<ConstantData> RandomFloats(std::vector<int64_t> shape, std::mt19937& rng, float lo,
                                           float hi) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return ConstantData::FromVector<float>(DataType::kFloat32, std::move(shape), std::move(v));
}

// A default-domain node of one output.
IrNode Node(std::string name, std::string op, std::vector<int> in, int out) {
  return MakeNode(name, op, "", std::move(in), out);
}

int AddActivation(IrGraph& g, const std::string& name, std::vector<int64_t> shape) {
  IrValue v;
  v.name = name;
  v.dtype = DataType::kFloat32;
  v.shape_known = true;
  v.shape = std::move(shape);
  v.dim_names.assign(v.shape.size(), "");
  return g.AddValue(std::move(v));
}

IrAttribute Ints(const std::string& name, std::vector<int64_t> v) {
  IrAttribute a;
  a.name = name;
  a.type = exec::AttrType::kInts;
  a.ints = std::move(v);
  return a;
}

// Runs the graph node by node with RunNodeOnce; returns the graph outputs.
std::vector<Tensor> Evaluate(const IrGraph& g, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> values(g.values.size());
  for (size_t i = 0; i < g.values.size(); ++i) {
    // Packed weights are made when the blob is written; here, when the graph first runs.
    if (g.values[i].constant) {
      auto c = Materialize(g.values[i].constant);
      EXPECT_TRUE(c.ok()) << c.status().ToString();
      if (c.ok()) values[i] = (*c)->AsTensor();
    }
  }
  for (size_t i = 0; i < g.inputs.size(); ++i) values[static_cast<size_t>(g.inputs[i])] = inputs[i];
  for (const IrNode& n : g.nodes) {
    exec::Attributes attrs = g.AttributesOf(n);
    std::vector<Tensor> views;
    exec::NodeInfo info = g.NodeInfoOf(n, attrs, views);
    std::vector<const Tensor*> ins;
    for (int i : n.inputs) ins.push_back(i < 0 ? nullptr : &values[static_cast<size_t>(i)]);
    auto outs = exec::RunNodeOnce(info, ins);
    EXPECT_TRUE(outs.ok()) << n.op_type << ": " << outs.status().ToString();
    if (!outs.ok()) return {};
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      if (n.outputs[o] >= 0) values[static_cast<size_t>(n.outputs[o])] = (*outs)[o];
    }
  }
  std::vector<Tensor> out;
  for (int o : g.outputs) out.push_back(values[static_cast<size_t>(o)]);
  return out;
}

// input [1,4,8,8] -> Conv(3x3, pad 1, 6 filters, bias) -> BatchNormalization -> Relu
//   -> Identity -> Gemm after Flatten -> Clip(0, 6) -> output
IrGraph BuildGraph(std::mt19937& rng) {
  IrGraph g;
  g.name = "test";
  g.opsets[""] = 13;
  int x = AddActivation(g, "x", {1, 4, 8, 8});
  g.inputs.push_back(x);
  int w = g.AddConstant("w", RandomFloats({6, 4, 3, 3}, rng, -0.5f, 0.5f));
  int b = g.AddConstant("b", RandomFloats({6}, rng, -0.5f, 0.5f));
  int scale = g.AddConstant("scale", RandomFloats({6}, rng, 0.5f, 1.5f));
  int beta = g.AddConstant("beta", RandomFloats({6}, rng, -0.2f, 0.2f));
  int mean = g.AddConstant("mean", RandomFloats({6}, rng, -0.2f, 0.2f));
  int var = g.AddConstant("var", RandomFloats({6}, rng, 0.5f, 1.5f));
  int c = AddActivation(g, "c", {1, 6, 8, 8});
  int bn = AddActivation(g, "bn", {1, 6, 8, 8});
  int r = AddActivation(g, "r", {1, 6, 8, 8});
  int id = AddActivation(g, "id", {1, 6, 8, 8});
  int flat = AddActivation(g, "flat", {1, 384});
  int gw = g.AddConstant("gw", RandomFloats({384, 5}, rng, -0.1f, 0.1f));
  int gb = g.AddConstant("gb", RandomFloats({5}, rng, -0.1f, 0.1f));
  int gemm = AddActivation(g, "gemm", {1, 5});
  int lo = g.AddConstant("lo", ConstantData::FromVector<float>(DataType::kFloat32, {}, {0.0f}));
  int hi = g.AddConstant("hi", ConstantData::FromVector<float>(DataType::kFloat32, {}, {0.6f}));
  int y = AddActivation(g, "y", {1, 5});
  g.outputs.push_back(y);

  IrNode conv{"conv", "Conv", "", {x, w, b}, {c}, {Ints("pads", {1, 1, 1, 1})}};
  IrNode batch{"bn", "BatchNormalization", "", {c, scale, beta, mean, var}, {bn}, {}};
  IrNode relu{"relu", "Relu", "", {bn}, {r}, {}};
  IrNode identity{"identity", "Identity", "", {r}, {id}, {}};
  IrNode flatten{"flatten", "Flatten", "", {id}, {flat}, {}};
  IrAttribute alpha;
  alpha.name = "alpha";
  alpha.type = exec::AttrType::kFloat;
  alpha.f = 0.5f;
  IrNode gemm_node{"gemm", "Gemm", "", {flat, gw, gb}, {gemm}, {alpha}};
  IrNode clip{"clip", "Clip", "", {gemm, lo, hi}, {y}, {}};
  g.nodes = {conv, batch, relu, identity, flatten, gemm_node, clip};
  return g;
}

TEST(Passes, FoldAndFusePreserveResults) {
  std::mt19937 rng(7);
  IrGraph graph = BuildGraph(rng);
  auto x = Tensor::Allocate(DataType::kFloat32, {1, 4, 8, 8});
  ASSERT_TRUE(x.ok());
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < x->element_count(); ++i) x->mutable_data_as<float>()[i] = dist(rng);

  std::vector<Tensor> before = Evaluate(graph, {*x});
  ASSERT_EQ(before.size(), 1u);
  auto stats = RunAllPasses(graph);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();

  std::vector<std::string> ops;
  for (const IrNode& n : graph.nodes) ops.push_back(n.domain + ":" + n.op_type);
  EXPECT_EQ(ops,
            (std::vector<std::string>{"com.epctx:DnnlConv", ":Flatten", "com.epctx:DnnlMatMul"}));
  // Gemm runs on oneDNN: B ([K, N] = [384, 5], alpha folded in) packed into the primitive's layout,
  // the Clip after it a post-op.
  const IrNode& gemm = graph.nodes[2];
  ASSERT_NE(gemm.FindAttr("weights_shape"), nullptr);
  EXPECT_EQ(gemm.FindAttr("weights_shape")->ints, (std::vector<int64_t>{384, 5}));
  EXPECT_EQ(gemm.FindAttr("transB"), nullptr);
  EXPECT_EQ(gemm.FindAttr("alpha"), nullptr);
  ASSERT_NE(gemm.FindAttr("post_ops"), nullptr);
  EXPECT_EQ(gemm.FindAttr("post_ops")->ints,
            (std::vector<int64_t>{static_cast<int64_t>(exec::kernels::onednn::PostOpKind::kClip)}));

  std::vector<Tensor> after = Evaluate(graph, {*x});
  ASSERT_EQ(after.size(), 1u);
  ASSERT_EQ(after[0].shape(), before[0].shape());
  int nonzero = 0;
  for (int64_t i = 0; i < before[0].element_count(); ++i) {
    float a = after[0].data_as<float>()[i], b = before[0].data_as<float>()[i];
    EXPECT_NEAR(a, b, 1e-5f + 1e-5f * std::fabs(b)) << "element " << i;
    nonzero += b != 0.0f;
  }
  EXPECT_GT(nonzero, 0) << "the test graph's output is all zeros; it checks nothing";
}

// x [1,8,6,6] -> Conv (filter [4,8,k,k], bias, no padding) -> `pool` (AveragePool 2x2 of stride
// 2 with `pool_pads`, or GlobalAveragePool) -> y.
IrGraph ConvThenPool(std::mt19937& rng, int64_t k, const std::string& pool,
                     std::vector<int64_t> pool_pads) {
  IrGraph g;
  g.name = "pool";
  g.opsets[""] = 13;
  int x = AddActivation(g, "x", {1, 8, 6, 6});
  g.inputs.push_back(x);
  int w = g.AddConstant("w", RandomFloats({4, 8, k, k}, rng, -0.5f, 0.5f));
  int b = g.AddConstant("b", RandomFloats({4}, rng, -0.5f, 0.5f));
  const int64_t conv_side = 6 - k + 1;
  int c = AddActivation(g, "c", {1, 4, conv_side, conv_side});
  const bool global = pool == "GlobalAveragePool";
  const int64_t side = global ? 1 : (conv_side + pool_pads[0] + pool_pads[2] - 2) / 2 + 1;
  int y = AddActivation(g, "y", {1, 4, side, side});
  g.outputs.push_back(y);
  IrNode conv{"conv", "Conv", "", {x, w, b}, {c}, {}};
  IrNode averages{"pool", pool, "", {c}, {y}, {}};
  if (!global) {
    averages.attrs = {Ints("kernel_shape", {2, 2}), Ints("strides", {2, 2}),
                      Ints("pads", std::move(pool_pads))};
  }
  g.nodes = {conv, averages};
  return g;
}

// Averages of a 1x1 convolution's outputs are the convolution of the averaged input (DenseNet's
// transitions): the pool moves first, the result is the unoptimized graph's. A padded window or
// a 3x3 filter keeps the order.
TEST(Passes, AveragePoolMovesBeforeAPointwiseConv) {
  std::mt19937 rng(21);
  auto x = Tensor::Allocate(DataType::kFloat32, {1, 8, 6, 6});
  ASSERT_TRUE(x.ok());
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < x->element_count(); ++i) x->mutable_data_as<float>()[i] = dist(rng);
  struct Case {
    int64_t k;
    std::string pool;
    std::vector<int64_t> pool_pads;
    bool moves;
  };
  for (const Case& t :
       {Case{1, "AveragePool", {0, 0, 0, 0}, true}, Case{1, "GlobalAveragePool", {}, true},
        Case{1, "AveragePool", {1, 1, 1, 1}, false}, Case{3, "AveragePool", {0, 0, 0, 0}, false}}) {
    SCOPED_TRACE(t.pool + " of a " + std::to_string(t.k) + "x" + std::to_string(t.k) +
                 " conv, pad " +
                 (t.pool_pads.empty() ? std::string("none") : std::to_string(t.pool_pads[0])));
    IrGraph g = ConvThenPool(rng, t.k, t.pool, t.pool_pads);
    std::vector<Tensor> before = Evaluate(g, {*x});
    ASSERT_EQ(before.size(), 1u);
    auto stats = PoolBeforePointwiseConvs(g);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->changed, t.moves ? 1 : 0);
    ASSERT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes[0].op_type, t.moves ? t.pool : "Conv");
    if (t.moves) {
      const IrValue& pooled = g.values[static_cast<size_t>(g.nodes[0].outputs[0])];
      EXPECT_EQ(pooled.shape, (std::vector<int64_t>{1, 8, t.pool == "AveragePool" ? 3 : 1,
                                                    t.pool == "AveragePool" ? 3 : 1}));
      EXPECT_EQ(g.nodes[1].inputs[0], g.nodes[0].outputs[0]);
      EXPECT_EQ(g.nodes[1].outputs[0], g.outputs[0]);
    }
    std::vector<Tensor> after = Evaluate(g, {*x});
    ASSERT_EQ(after.size(), 1u);
    ASSERT_EQ(after[0].shape(), before[0].shape());
    for (int64_t i = 0; i < before[0].element_count(); ++i) {
      float a = after[0].data_as<float>()[i], b = before[0].data_as<float>()[i];
      EXPECT_NEAR(a, b, 1e-5f + 1e-5f * std::fabs(b)) << "element " << i;
    }
  }
}

TEST(Passes, BatchNormSixFoldsOnlyInTestMode) {
  for (int is_test : {-1, 0, 1}) {  // -1: attribute absent (the opset-6 default, training)
    std::mt19937 rng(7);
    IrGraph graph = BuildGraph(rng);
    graph.opsets[""] = 6;
    if (is_test >= 0) {
      IrAttribute a;
      a.name = "is_test";
      a.type = exec::AttrType::kInt;
      a.i = is_test;
      graph.nodes[1].attrs.push_back(a);
    }
    auto stats = FoldBatchNormIntoConv(graph);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->changed, is_test == 1 ? 1 : 0) << "is_test " << is_test;
  }
}

TEST(Passes, IdentityFeedingAGraphOutputStays) {
  IrGraph g;
  g.opsets[""] = 13;
  int x = AddActivation(g, "x", {2});
  int y = AddActivation(g, "y", {2});
  g.inputs = {x};
  g.outputs = {y};
  g.nodes = {IrNode{"id", "Identity", "", {x}, {y}, {}}};
  auto stats = EliminateIdentityLike(g);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->changed, 0);
  EXPECT_EQ(g.nodes.size(), 1u);
}

TEST(Passes, ConstantSubgraphIsFolded) {
  IrGraph g;
  g.opsets[""] = 13;
  int a = g.AddConstant("a", ConstantData::FromVector<float>(DataType::kFloat32, {2}, {1, 2}));
  int b = g.AddConstant("b", ConstantData::FromVector<float>(DataType::kFloat32, {2}, {10, 20}));
  int s = AddActivation(g, "s", {2});
  int x = AddActivation(g, "x", {2});
  int y = AddActivation(g, "y", {2});
  g.inputs = {x};
  g.outputs = {y};
  g.nodes = {IrNode{"add", "Add", "", {a, b}, {s}, {}}, IrNode{"mul", "Mul", "", {x, s}, {y}, {}}};
  auto stats = FoldConstants(g);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->changed, 1);
  ASSERT_EQ(g.nodes.size(), 1u);
  const IrValue& folded = g.values[static_cast<size_t>(s)];
  ASSERT_TRUE(folded.is_constant());
  const float* v = reinterpret_cast<const float*>(folded.constant->bytes.data());
  EXPECT_EQ(v[0], 11.0f);
  EXPECT_EQ(v[1], 22.0f);
}

// A float16 weight that only matmuls read as their weight is lifted to float32 when the blob is
// written (deferred), one that something else reads too at once; after every pass the graph
// computes what the float32 graph computes, the deferred weights packed from the lifted values.
TEST(Passes, Float16MatMulWeightsAreLiftedWhenWritten) {
  std::mt19937 rng(16);
  auto half_of = [&](std::vector<int64_t> shape) {
    std::shared_ptr<ConstantData> f = RandomFloats(shape, rng, -0.5f, 0.5f);
    const float* src = reinterpret_cast<const float*>(f->bytes.data());
    std::vector<uint16_t> bits(f->bytes.size() / sizeof(float));
    for (size_t i = 0; i < bits.size(); ++i) {
      bits[i] = exec::kernels::elementwise::FloatToHalf(src[i]).bits;
    }
    std::vector<uint8_t> bytes(bits.size() * sizeof(uint16_t));
    std::memcpy(bytes.data(), bits.data(), bytes.size());
    return ConstantData::FromVector<uint8_t>(DataType::kFloat16, std::move(shape),
                                             std::move(bytes));
  };
  IrGraph g;
  g.name = "f16";
  g.opsets[""] = 13;
  // Only the weights are float16 here (the graph's own float16 inputs and outputs would keep
  // Casts): the lifted graph then runs on the same float32 input as the reference.
  const int x = AddActivation(g, "x", {4, 256});
  g.inputs.push_back(x);
  const int w_only = g.AddConstant("w_only", half_of({256, 256}));      // 128 KiB, MatMul only
  const int w_shared = g.AddConstant("w_shared", half_of({256, 256}));  // MatMul and Add
  const int h = AddActivation(g, "h", {4, 256});
  const int y = AddActivation(g, "y", {4, 256});
  const int z = AddActivation(g, "z", {256, 256});
  IrNode mm1 = Node("mm1", "MatMul", {x, w_only}, h);
  IrNode mm2 = Node("mm2", "MatMul", {h, w_shared}, y);
  IrNode add = Node("add", "Add", {w_shared, w_shared}, z);
  g.nodes = {mm1, mm2, add};
  g.outputs = {y, z};
  IrGraph reference = g;

  auto lifted = LiftFloat16(g);
  ASSERT_TRUE(lifted.ok()) << lifted.status().ToString();
  EXPECT_TRUE(g.values[static_cast<size_t>(w_only)].constant->deferred());
  EXPECT_FALSE(g.values[static_cast<size_t>(w_shared)].constant->deferred());
  EXPECT_EQ(g.values[static_cast<size_t>(w_only)].constant->dtype, DataType::kFloat32);

  // The reference: the same graph with its float16 weights lifted at once (what the pass did
  // before deferring), evaluated node by node.
  for (IrValue& v : reference.values) {
    if (v.dtype != DataType::kFloat16) continue;
    v.dtype = DataType::kFloat32;
    if (v.constant) {
      const auto* bits = reinterpret_cast<const uint16_t*>(v.constant->bytes.data());
      std::vector<float> f(v.constant->bytes.size() / 2);
      for (size_t i = 0; i < f.size(); ++i) {
        f[i] = exec::kernels::elementwise::HalfToFloat(exec::kernels::elementwise::Half{bits[i]});
      }
      v.constant = ConstantData::FromVector<float>(DataType::kFloat32, v.shape, std::move(f));
    }
  }
  std::vector<float> xs(4 * 256);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : xs) v = dist(rng);
  Tensor input = *Tensor::Allocate(DataType::kFloat32, {4, 256});
  std::memcpy(input.mutable_data(), xs.data(), xs.size() * sizeof(float));
  const std::vector<Tensor> expected = Evaluate(reference, {input});

  auto passes = RunAllPasses(g);
  ASSERT_TRUE(passes.ok()) << passes.status().ToString();
  const std::vector<Tensor> got = Evaluate(g, {input});
  ASSERT_EQ(got.size(), 2u);
  ASSERT_EQ(expected.size(), 2u);
  for (size_t o = 0; o < 2; ++o) {
    ASSERT_EQ(got[o].element_count(), expected[o].element_count());
    const float* a = got[o].data_as<float>();
    const float* b = expected[o].data_as<float>();
    for (int64_t i = 0; i < got[o].element_count(); ++i) {
      ASSERT_NEAR(a[i], b[i], 1e-4f) << "output " << o << " element " << i;
    }
  }
  // Both matmuls' packed weights are stored as float16 again where the kernels read them (AVX-512
  // builds, and AVX2 ones with F16C and FMA): their values are float16's, whether lifted when
  // written or at once.
  std::vector<DataType> weight_types;
  for (const IrNode& n : g.nodes) {
    if (n.op_type != "DnnlMatMul") continue;
    weight_types.push_back(g.values[static_cast<size_t>(n.inputs[1])].constant->dtype);
  }
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__F16C__) && defined(__FMA__))
  EXPECT_EQ(weight_types, (std::vector<DataType>{DataType::kFloat16, DataType::kFloat16}));
#else
  EXPECT_EQ(weight_types, (std::vector<DataType>{DataType::kFloat32, DataType::kFloat32}));
#endif
}

// A float16 embedding table that only a Gather reads stays float16, a Cast widening the rows
// picked; the graph computes what the lifted graph computes, exactly. A table read by something
// else too is lifted as before.
TEST(Passes, Float16EmbeddingTablesStayFloat16) {
  for (bool only_gathered : {true, false}) {
    SCOPED_TRACE(only_gathered ? "only gathered" : "gathered and added");
    std::mt19937 rng(31);
    std::shared_ptr<ConstantData> f = RandomFloats({600, 64}, rng, -2.0f, 2.0f);  // 75 KiB
    const float* src = reinterpret_cast<const float*>(f->bytes.data());
    std::vector<uint8_t> bytes(f->bytes.size() / 2);
    for (size_t i = 0; i < bytes.size() / 2; ++i) {
      const uint16_t bits = exec::kernels::elementwise::FloatToHalf(src[i]).bits;
      std::memcpy(bytes.data() + 2 * i, &bits, 2);
    }
    IrGraph g;
    g.name = "embedding";
    g.opsets[""] = 13;
    IrValue ids;
    ids.name = "ids";
    ids.dtype = DataType::kInt64;
    ids.shape_known = true;
    ids.shape = {5};
    ids.dim_names = {""};
    const int id = g.AddValue(ids);
    g.inputs.push_back(id);
    const int table = g.AddConstant(
        "table", ConstantData::FromVector<uint8_t>(DataType::kFloat16, {600, 64}, bytes));
    IrValue rows_value;
    rows_value.name = "rows";
    rows_value.dtype = DataType::kFloat16;
    rows_value.shape_known = true;
    rows_value.shape = {5, 64};
    rows_value.dim_names = {"", ""};
    const int rows = g.AddValue(rows_value);
    rows_value.name = "y";
    rows_value.dtype = DataType::kFloat32;
    const int y = g.AddValue(rows_value);
    IrNode gather{"gather", "Gather", "", {table, id}, {rows}, {}};
    IrNode cast{"cast", "Cast", "", {rows}, {y}, {}};
    IrAttribute to;
    to.name = "to";
    to.type = exec::AttrType::kInt;
    to.i = 1;
    cast.attrs.push_back(to);
    g.nodes = {gather, cast};
    g.outputs = {y};
    if (!only_gathered) {
      IrValue z = g.values[static_cast<size_t>(table)];
      z.name = "z";
      z.constant = nullptr;
      const int zi = g.AddValue(z);
      g.nodes.push_back(IrNode{"add", "Add", "", {table, table}, {zi}, {}});
      g.outputs.push_back(zi);
    }
    auto lifted = LiftFloat16(g);
    ASSERT_TRUE(lifted.ok()) << lifted.status().ToString();
    EXPECT_EQ(g.values[static_cast<size_t>(table)].constant->dtype,
              only_gathered ? DataType::kFloat16 : DataType::kFloat32);
    Tensor input = *Tensor::Allocate(DataType::kInt64, {5});
    const int64_t picked[] = {0, 599, 17, 17, 300};
    std::memcpy(input.mutable_data(), picked, sizeof picked);
    const std::vector<Tensor> got = Evaluate(g, {input});
    ASSERT_GE(got.size(), 1u);
    ASSERT_EQ(got[0].dtype(), DataType::kFloat32);
    const float* out = got[0].data_as<float>();
    for (int r = 0; r < 5; ++r) {
      for (int c = 0; c < 64; ++c) {
        namespace ew = exec::kernels::elementwise;
        const float want = ew::HalfToFloat(ew::FloatToHalf(src[picked[r] * 64 + c]));
        ASSERT_EQ(out[r * 64 + c], want) << "row " << r << " column " << c;
      }
    }
  }
}

// A float16 model's erf GELU after a matmul: its sqrt(2) is float16's 1.4140625, which float32
// arithmetic would tell from sqrt(2) (outputs ~3e-5 apart), float16's own cannot. With constants
// that are float16 values (LiftFloat16's) the chain is fused into the matmul as GELU, the result
// within float16's precision of the graph's; the same numbers as float32 constants are not fused.
TEST(Passes, Float16GeluIsFusedWithinFloat16Precision) {
  for (bool float16 : {true, false}) {
    SCOPED_TRACE(float16 ? "float16 constants" : "float32 constants");
    std::mt19937 rng(21);
    IrGraph g;
    g.name = "gelu";
    g.opsets[""] = 13;
    const int x = AddActivation(g, "x", {4, 64});
    g.inputs.push_back(x);
    auto scalar = [&](const std::string& name, float v) {
      std::shared_ptr<ConstantData> c =
          ConstantData::FromVector<float>(DataType::kFloat32, {}, {v});
      c->float16_values = float16;
      return g.AddConstant(name, std::move(c));
    };
    const int w = g.AddConstant("w", RandomFloats({64, 64}, rng, -0.3f, 0.3f));
    const int root2 = scalar("root2", 1.4140625f), one = scalar("one", 1.0f),
              half = scalar("half", 0.5f);
    std::vector<int> v;
    for (const char* name : {"h", "d", "e", "a", "m", "y"})
      v.push_back(AddActivation(g, name, {4, 64}));
    g.nodes = {Node("mm", "MatMul", {x, w}, v[0]),     Node("div", "Div", {v[0], root2}, v[1]),
               Node("erf", "Erf", {v[1]}, v[2]),       Node("add", "Add", {v[2], one}, v[3]),
               Node("mul", "Mul", {v[0], v[3]}, v[4]), Node("half", "Mul", {v[4], half}, v[5])};
    g.outputs = {v[5]};
    IrGraph reference = g;
    auto passes = RunAllPasses(g);
    ASSERT_TRUE(passes.ok()) << passes.status().ToString();
    bool erf_left = false;
    for (const IrNode& n : g.nodes) erf_left |= n.op_type == "Erf";
    EXPECT_EQ(erf_left, !float16);
    std::vector<float> xs(4 * 64);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    for (float& value : xs) value = dist(rng);
    Tensor input = *Tensor::Allocate(DataType::kFloat32, {4, 64});
    std::memcpy(input.mutable_data(), xs.data(), xs.size() * sizeof(float));
    const std::vector<Tensor> expected = Evaluate(reference, {input});
    const std::vector<Tensor> got = Evaluate(g, {input});
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(expected.size(), 1u);
    const float* a = got[0].data_as<float>();
    const float* b = expected[0].data_as<float>();
    for (int64_t i = 0; i < got[0].element_count(); ++i) {
      ASSERT_NEAR(a[i], b[i], 1e-3f * (1 + std::abs(b[i]))) << "element " << i;
    }
  }
}

}  // namespace
}  // namespace epctx::compile
