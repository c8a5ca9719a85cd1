// The rewrites into oneDNN's int8 kernels: which MatMulInteger nodes become com.epctx
// DnnlMatMulInteger (uint8 A, constant int8 B with zero point 0, one activation zero point; the
// weight's column sums added as a constant), and which QDQ MatMul and Conv patterns become
// integer products (LowerQdqMatMulsToInteger, LowerQdqConvsToInteger), with what they leave:
// among it, weights beyond [-64, 64] where oneDNN's int8 kernels lack VNNI and would saturate.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "compile/ir.h"
#include "compile/passes/passes.h"
#include "exec/kernels/onednn/isa.h"

namespace epctx::compile {
namespace {

int AddInput(IrGraph& g, const std::string& name, DataType type, std::vector<int64_t> shape) {
  IrValue v;
  v.name = name;
  v.dtype = type;
  v.shape_known = true;
  v.shape = std::move(shape);
  const int index = g.AddValue(std::move(v));
  g.inputs.push_back(index);
  return index;
}

template <typename T>
int AddConst(IrGraph& g, const std::string& name, DataType type, std::vector<int64_t> shape,
             std::vector<T> values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return g.AddConstant(name, ConstantData::FromVector<std::byte>(type, shape, std::move(bytes)));
}

// Weights within [-64, 64], which every CPU's oneDNN multiplies exactly.
std::vector<int8_t> SmallWeights(const std::vector<int8_t>& given) {
  if (!given.empty()) return given;
  return {1, -2, 3, 4, -5, 6};
}

struct Case {
  DataType a_type = DataType::kUint8;
  bool b_constant = true;
  std::vector<int64_t> a_zp_shape = {};  // empty vector: scalar; {-1}: absent
  int8_t b_zp = 0;
  std::vector<int8_t> w = {};  // B [3, 2]; empty: SmallWeights()
};

// MatMulInteger(A [4, 3], B [3, 2], a_zp, b_zp) -> the lowered graph.
IrGraph Lower(const Case& c) {
  IrGraph g;
  g.opsets[""] = 17;
  const int a = AddInput(g, "a", c.a_type, {4, 3});
  const int b = c.b_constant ? AddConst<int8_t>(g, "b", DataType::kInt8, {3, 2}, SmallWeights(c.w))
                             : AddInput(g, "b", DataType::kInt8, {3, 2});
  int a_zp = -1;
  if (c.a_zp_shape != std::vector<int64_t>{-1}) {
    const int64_t n = c.a_zp_shape.empty() ? 1 : c.a_zp_shape[0];
    a_zp = AddConst<uint8_t>(g, "a_zp", c.a_type, c.a_zp_shape,
                             std::vector<uint8_t>(static_cast<size_t>(n), 5));
  }
  const int b_zp = AddConst<int8_t>(g, "b_zp", DataType::kInt8, {}, {c.b_zp});
  IrValue y;
  y.name = "y";
  y.dtype = DataType::kInt32;
  y.shape_known = true;
  y.shape = {4, 2};
  const int out = g.AddValue(std::move(y));
  g.outputs.push_back(out);
  IrNode n;
  n.name = "mm";
  n.op_type = "MatMulInteger";
  n.inputs = {a, b, a_zp, b_zp};
  n.outputs = {out};
  g.nodes.push_back(std::move(n));
  auto stats = LowerMatMulIntegersToDnnl(g);
  EXPECT_TRUE(stats.ok()) << stats.status().ToString();
  return g;
}

TEST(LowerMatMulIntegers, LowersWithColumnSums) {
  for (const std::vector<int64_t>& zp_shape : std::vector<std::vector<int64_t>>{{}, {1}, {-1}}) {
    IrGraph g = Lower({DataType::kUint8, true, zp_shape, 0});
    ASSERT_EQ(g.nodes.size(), 1u);
    const IrNode& n = g.nodes[0];
    EXPECT_EQ(n.op_type, "DnnlMatMulInteger");
    EXPECT_EQ(n.domain, "com.epctx");
    ASSERT_EQ(n.inputs.size(), 4u);
    EXPECT_EQ(n.inputs[2] < 0, zp_shape == std::vector<int64_t>{-1});
    const IrValue& sums = g.values[static_cast<size_t>(n.inputs[3])];
    ASSERT_TRUE(sums.constant);
    EXPECT_EQ(sums.dtype, DataType::kInt32);
    const int32_t* s = reinterpret_cast<const int32_t*>(sums.constant->bytes.data());
    EXPECT_EQ(std::vector<int32_t>(s, s + 2), (std::vector<int32_t>{1 + 3 - 5, -2 + 4 + 6}));
    EXPECT_EQ(g.opsets.at("com.epctx"), 1);
  }
}

TEST(LowerMatMulIntegers, LeavesWhatTheKernelDoesNotCompute) {
  EXPECT_EQ(Lower({DataType::kUint8, true, {}, 3}).nodes[0].op_type, "MatMulInteger")
      << "weight zero point not 0";
  EXPECT_EQ(Lower({DataType::kUint8, true, {4}, 0}).nodes[0].op_type, "MatMulInteger")
      << "zero point per row of A";
  EXPECT_EQ(Lower({DataType::kInt8, true, {}, 0}).nodes[0].op_type, "MatMulInteger") << "int8 A";
  EXPECT_EQ(Lower({DataType::kUint8, false, {}, 0}).nodes[0].op_type, "MatMulInteger")
      << "B not constant";
}

// DequantizeLinear(x_q [4, 3] uint8) x DequantizeLinear(w_q [3, 2] int8) -> MatMul -> y.
struct QdqCase {
  std::vector<float> w_scale = {0.5f, 0.25f};  // per column (axis 1) unless one value
  int64_t w_axis = 1;
  int8_t w_zero = 0;
  bool x_scale_constant = true;
  std::vector<int8_t> w = {};  // B [3, 2]; empty: SmallWeights()
};

int AddNode(IrGraph& g, const std::string& op, std::vector<int> inputs, DataType type,
            std::vector<int64_t> shape, std::vector<IrAttribute> attrs = {}) {
  IrValue v;
  v.name = g.UniqueName(op + "_out");
  v.dtype = type;
  v.shape_known = true;
  v.shape = std::move(shape);
  const int out = g.AddValue(std::move(v));
  IrNode n;
  n.name = g.UniqueName(op);
  n.op_type = op;
  n.inputs = std::move(inputs);
  n.outputs = {out};
  n.attrs = std::move(attrs);
  g.nodes.push_back(std::move(n));
  return out;
}

IrGraph LowerQdq(const QdqCase& c) {
  IrGraph g;
  g.opsets[""] = 17;
  const int xq = AddInput(g, "x_q", DataType::kUint8, {4, 3});
  const int xs = c.x_scale_constant ? AddConst<float>(g, "x_s", DataType::kFloat32, {}, {0.1f})
                                    : AddInput(g, "x_s", DataType::kFloat32, {});
  const int xz = AddConst<uint8_t>(g, "x_z", DataType::kUint8, {}, {128});
  const int x = AddNode(g, "DequantizeLinear", {xq, xs, xz}, DataType::kFloat32, {4, 3});
  const int wq = AddConst<int8_t>(g, "w_q", DataType::kInt8, {3, 2}, SmallWeights(c.w));
  const std::vector<int64_t> ws_shape =
      c.w_scale.size() == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{2};
  const int ws = AddConst<float>(g, "w_s", DataType::kFloat32, ws_shape, c.w_scale);
  const int wz = AddConst<int8_t>(g, "w_z", DataType::kInt8, ws_shape,
                                  std::vector<int8_t>(c.w_scale.size(), c.w_zero));
  IrAttribute axis;
  axis.name = "axis";
  axis.type = exec::AttrType::kInt;
  axis.i = c.w_axis;
  const int w = AddNode(g, "DequantizeLinear", {wq, ws, wz}, DataType::kFloat32, {3, 2}, {axis});
  g.outputs.push_back(AddNode(g, "MatMul", {x, w}, DataType::kFloat32, {4, 2}));
  auto stats = LowerQdqMatMulsToInteger(g);
  EXPECT_TRUE(stats.ok()) << stats.status().ToString();
  return g;
}

int CountOp(const IrGraph& g, const std::string& op) {
  int n = 0;
  for (const IrNode& node : g.nodes) n += node.op_type == op;
  return n;
}

TEST(LowerQdqMatMuls, BecomeAnIntegerMatMulWithOutputScales) {
  for (const std::vector<float>& scales : std::vector<std::vector<float>>{{0.5f, 0.25f}, {0.5f}}) {
    IrGraph g = LowerQdq({scales});
    ASSERT_EQ(CountOp(g, "MatMul"), 0);
    ASSERT_EQ(g.nodes.size(), 3u);  // the two DequantizeLinear stay for dead-node elimination
    const IrNode& mm = g.nodes[2];
    EXPECT_EQ(mm.op_type, "DnnlMatMulInteger");
    EXPECT_EQ(mm.domain, "com.epctx");
    EXPECT_EQ(g.values[static_cast<size_t>(mm.inputs[0])].name, "x_q");
    EXPECT_EQ(g.values[static_cast<size_t>(mm.inputs[1])].name, "w_q");
    EXPECT_EQ(g.values[static_cast<size_t>(mm.inputs[2])].name, "x_z");
    EXPECT_EQ(mm.outputs[0], g.outputs[0]);
    ASSERT_NE(mm.FindAttr("output_scales"), nullptr);
    std::vector<float> want;
    for (float s : scales) want.push_back(0.1f * s);
    EXPECT_EQ(mm.FindAttr("output_scales")->floats, want);
    const IrValue& sums = g.values[static_cast<size_t>(mm.inputs[3])];
    ASSERT_TRUE(sums.constant);
    const int32_t* sp = reinterpret_cast<const int32_t*>(sums.constant->bytes.data());
    EXPECT_EQ(std::vector<int32_t>(sp, sp + 2), (std::vector<int32_t>{1 + 3 - 5, -2 + 4 + 6}));
  }
}

TEST(LowerQdqMatMuls, LeavesWhatIsNotAnIntegerProduct) {
  EXPECT_EQ(CountOp(LowerQdq({{0.5f, 0.25f}, 1, 2}), "MatMul"), 1) << "weight zero point";
  EXPECT_EQ(CountOp(LowerQdq({{0.5f, 0.25f}, 0}), "MatMul"), 1) << "scales along K";
  EXPECT_EQ(CountOp(LowerQdq({{0.5f}, 1, 0, false}), "MatMul"), 1) << "activation scale input";
}

// DQ(x_q [1, 2, 5, 5] uint8, 0.1, 128) -> Conv(3x3, pads 1) <- DQ(w_q [2, 2, 3, 3] int8, per
// channel), bias DQ(int32 [2], 0.1 * w_scale).
IrGraph LowerQdqConv(int8_t w_zero, const std::string& auto_pad, int8_t w_first = 5) {
  IrGraph g;
  g.opsets[""] = 17;
  const int xq = AddInput(g, "x_q", DataType::kUint8, {1, 2, 5, 5});
  const int xs = AddConst<float>(g, "x_s", DataType::kFloat32, {}, {0.1f});
  const int xz = AddConst<uint8_t>(g, "x_z", DataType::kUint8, {}, {128});
  const int x = AddNode(g, "DequantizeLinear", {xq, xs, xz}, DataType::kFloat32, {1, 2, 5, 5});
  std::vector<int8_t> w(36, 1);
  w[0] = w_first;  // channel 0 sums to 22 (with 5), channel 1 to 18
  const int wq = AddConst<int8_t>(g, "w_q", DataType::kInt8, {2, 2, 3, 3}, w);
  const int ws = AddConst<float>(g, "w_s", DataType::kFloat32, {2}, {0.5f, 0.25f});
  const int wz = AddConst<int8_t>(g, "w_z", DataType::kInt8, {2}, {w_zero, w_zero});
  IrAttribute axis;
  axis.name = "axis";
  axis.type = exec::AttrType::kInt;
  axis.i = 0;
  const int wd =
      AddNode(g, "DequantizeLinear", {wq, ws, wz}, DataType::kFloat32, {2, 2, 3, 3}, {axis});
  const int bq = AddConst<int32_t>(g, "b_q", DataType::kInt32, {2}, {100, -40});
  const int bs = AddConst<float>(g, "b_s", DataType::kFloat32, {2}, {0.05f, 0.025f});
  const int bd = AddNode(g, "DequantizeLinear", {bq, bs}, DataType::kFloat32, {2}, {axis});
  IrAttribute pads;
  pads.name = "pads";
  pads.type = exec::AttrType::kInts;
  pads.ints = {1, 1, 1, 1};
  IrAttribute pad_mode;
  pad_mode.name = "auto_pad";
  pad_mode.type = exec::AttrType::kString;
  pad_mode.s = auto_pad;
  std::vector<IrAttribute> attrs{pad_mode};
  if (auto_pad == "NOTSET") attrs.push_back(pads);
  g.outputs.push_back(
      AddNode(g, "Conv", {x, wd, bd}, DataType::kFloat32, {1, 2, 5, 5}, std::move(attrs)));
  auto stats = LowerQdqConvsToInteger(g);
  EXPECT_TRUE(stats.ok()) << stats.status().ToString();
  return g;
}

TEST(LowerQdqConvs, BecomeAnIntegerConvWithTheZeroPointInTheBias) {
  IrGraph g = LowerQdqConv(0, "NOTSET");
  const IrNode& conv = g.nodes.back();
  ASSERT_EQ(conv.op_type, "DnnlIntegerConv");
  EXPECT_EQ(conv.domain, "com.epctx");
  EXPECT_EQ(g.values[static_cast<size_t>(conv.inputs[0])].name, "x_q");
  EXPECT_EQ(g.values[static_cast<size_t>(conv.inputs[1])].name, "w_q");
  EXPECT_EQ(conv.outputs[0], g.outputs[0]);
  ASSERT_NE(conv.FindAttr("x_zero_point"), nullptr);
  EXPECT_EQ(conv.FindAttr("x_zero_point")->i, 128);
  ASSERT_NE(conv.FindAttr("output_scales"), nullptr);
  EXPECT_EQ(conv.FindAttr("output_scales")->floats,
            (std::vector<float>{0.1f * 0.5f, 0.1f * 0.25f}));
  ASSERT_NE(conv.FindAttr("pads"), nullptr);
  EXPECT_EQ(conv.FindAttr("auto_pad"), nullptr);
  // bias / scale - zero point * sum of the channel's filter.
  const IrValue& b = g.values[static_cast<size_t>(conv.inputs[2])];
  ASSERT_TRUE(b.constant);
  const float* bp = reinterpret_cast<const float*>(b.constant->bytes.data());
  EXPECT_FLOAT_EQ(bp[0], 100 * 0.05f / (0.1f * 0.5f) - 128 * 22);
  EXPECT_FLOAT_EQ(bp[1], -40 * 0.025f / (0.1f * 0.25f) - 128 * 18);
}

TEST(LowerQdqConvs, LeavesWhatIsNotAnIntegerConvolution) {
  EXPECT_EQ(CountOp(LowerQdqConv(1, "NOTSET"), "Conv"), 1) << "weight zero point";
  EXPECT_EQ(CountOp(LowerQdqConv(0, "SAME_UPPER"), "Conv"), 1) << "padding from the shapes";
  EXPECT_EQ(CountOp(LowerQdqConv(0, "VALID"), "DnnlIntegerConv"), 1) << "VALID: no padding";
}

// Weights beyond [-64, 64] (here one of -65, 100, -128, 127) go to oneDNN's int8 kernels only
// where those have VNNI: without it they would add pairs of products in int16 and saturate, so
// the product stays on exact kernels (MatMulInteger's own, the float MatMul or Conv of the
// dequantized values). Within the bound it goes there on every CPU.
TEST(LowerInt8Products, WeightsBeyond64GoToOneDnnOnlyWithVnni) {
  const bool vnni = exec::kernels::onednn::Int8KernelsHaveVnni();
  for (int8_t big : {int8_t{-65}, int8_t{100}, int8_t{-128}, int8_t{127}}) {
    SCOPED_TRACE(static_cast<int>(big));
    Case mm;
    mm.w = {1, -2, 3, big, -5, 6};
    EXPECT_EQ(Lower(mm).nodes[0].op_type, vnni ? "DnnlMatMulInteger" : "MatMulInteger");
    QdqCase qdq;
    qdq.w = {big, -2, 3, 4, -5, 6};
    IrGraph g = LowerQdq(qdq);
    EXPECT_EQ(CountOp(g, "DnnlMatMulInteger"), vnni ? 1 : 0);
    EXPECT_EQ(CountOp(g, "MatMul"), vnni ? 0 : 1);
    IrGraph conv = LowerQdqConv(0, "NOTSET", big);
    EXPECT_EQ(CountOp(conv, "DnnlIntegerConv"), vnni ? 1 : 0);
    EXPECT_EQ(CountOp(conv, "Conv"), vnni ? 0 : 1);
  }
  for (int8_t edge : {int8_t{-64}, int8_t{64}}) {
    Case mm;
    mm.w = {1, -2, 3, edge, -5, 6};
    EXPECT_EQ(Lower(mm).nodes[0].op_type, "DnnlMatMulInteger") << static_cast<int>(edge);
    QdqCase qdq;
    qdq.w = {edge, -2, 3, 4, -5, 6};
    EXPECT_EQ(CountOp(LowerQdq(qdq), "DnnlMatMulInteger"), 1) << static_cast<int>(edge);
    EXPECT_EQ(CountOp(LowerQdqConv(0, "NOTSET", edge), "DnnlIntegerConv"), 1)
        << static_cast<int>(edge);
  }
}

}  // namespace
}  // namespace epctx::compile
