// FuseSiblingNBitsMatMuls: MatMulNBits nodes of one activation become one node whose outputs are
// the same numbers, to the bit, as the separate nodes give: the fused weight is their packed
// bytes side by side, and each column is computed as before.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include <random>
#include <span>
#include <string>
#include <vector>

#include "compile/dnnl_graph_helpers.h"
#include "compile/onnx_import.h"
#include "compile/passes/passes.h"

namespace epctx::testing::dnnl {
namespace {

struct Sibling {
  int64_t n;
  int64_t k = 64;
  bool zero_points = false;
  bool bias = false;
};

// A graph of MatMulNBits nodes (bits 4, block 32, accuracy `level`) of A [rows, 64] (or of K
// when a sibling says so), one output each, random codes, scales, zero points and biases.
std::string ModelText(const std::vector<Sibling>& siblings, int64_t rows, int level,
                      std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.01f, 0.1f), bias(-1, 1);
  std::string inputs = fmt::format("float[{}, 64] a", rows);
  std::string outputs, initializers, nodes;
  for (size_t i = 0; i < siblings.size(); ++i) {
    const Sibling& s = siblings[i];
    const int64_t blocks = (s.k + 31) / 32;
    std::vector<int> codes(static_cast<size_t>(s.n * blocks * 16));
    for (int& c : codes) c = byte(rng);
    std::vector<float> scales(static_cast<size_t>(s.n * blocks));
    for (float& v : scales) v = scale(rng);
    initializers +=
        fmt::format("{}uint8[{}, {}, 16] b{} = {{{}}}", initializers.empty() ? "" : ", ", s.n,
                    blocks, i, fmt::join(codes, ","));
    initializers +=
        fmt::format(", float[{}] s{} = {{{}}}", scales.size(), i, fmt::join(scales, ","));
    std::string args = fmt::format("x{}, b{}, s{}", i, i, i);
    if (s.zero_points) {
      std::vector<int> zp(static_cast<size_t>(s.n * ((blocks + 1) / 2)));
      for (int& z : zp) z = byte(rng);
      initializers += fmt::format(", uint8[{}] z{} = {{{}}}", zp.size(), i, fmt::join(zp, ","));
      args += fmt::format(", z{}", i);
    } else {
      args += ", ";
    }
    if (s.bias) {
      std::vector<float> values(static_cast<size_t>(s.n));
      for (float& v : values) v = bias(rng);
      initializers += fmt::format(", float[{}] c{} = {{{}}}", s.n, i, fmt::join(values, ","));
      args += fmt::format(", , c{}", i);
    }
    // A of another K: a slice of the first K columns, so that it is another activation.
    nodes += s.k == 64 ? fmt::format("  x{} = Identity(a)\n", i)
                       : fmt::format("  x{} = Slice(a, zero, k{}, one)\n", i, i);
    if (s.k != 64) initializers += fmt::format(", int64[1] k{} = {{{}}}", i, s.k);
    nodes += fmt::format(
        "  y{} = com.microsoft.MatMulNBits<K = {}, N = {}, bits = 4, block_size = 32, "
        "accuracy_level = {}>({})\n",
        i, s.k, s.n, level, args);
    outputs += fmt::format("{}float[{}, {}] y{}", outputs.empty() ? "" : ", ", rows, s.n, i);
  }
  return fmt::format(
      "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n"
      "agraph ({}) => ({})\n<int64[1] zero = {{0}}, int64[1] one = {{1}}, {}>\n{{\n{}}}\n",
      inputs, outputs, initializers, nodes);
}

compile::IrGraph Import(const std::string& text) {
  onnx::ModelProto model;
  onnx::Status parsed = onnx::OnnxParser::Parse(model, text.c_str());
  EXPECT_TRUE(parsed.IsOK()) << parsed.ErrorMessage();
  const std::string bytes = model.SerializeAsString();
  auto imported =
      compile::ImportModelBytes(std::as_bytes(std::span<const char>(bytes)), "siblings.onnx", "");
  EXPECT_TRUE(imported.ok()) << imported.status().ToString();
  return imported.ok() ? std::move(imported->graph) : compile::IrGraph();
}

int CountPacked(const compile::IrGraph& g) {
  return CountOps(g, "MatMulNBitsPacked");
}

// The nodes packed one by one, then fused; both evaluated on the same A.
void CheckFusion(const std::vector<Sibling>& siblings, int64_t rows, int level, int threads,
                 int fused_nodes, std::vector<int64_t> first_columns) {
  SCOPED_TRACE(::testing::Message()
               << "rows " << rows << " level " << level << " threads " << threads);
  std::mt19937 rng(static_cast<uint32_t>(rows * 10 + level));
  compile::IrGraph separate = Import(ModelText(siblings, rows, level, rng));
  ASSERT_TRUE(compile::LowerMatMulNBits(separate).ok());
  ASSERT_TRUE(compile::EliminateIdentityLike(separate).ok());
  ASSERT_EQ(CountPacked(separate), static_cast<int>(siblings.size()));
  compile::IrGraph fused = separate;
  auto stats = compile::FuseSiblingNBitsMatMuls(fused);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(CountPacked(fused), fused_nodes);
  for (const compile::IrNode& n : fused.nodes) {
    if (n.op_type == "MatMulNBitsPacked" && n.outputs.size() > 1) {
      EXPECT_EQ(IntsAttr(n, "output_columns"), first_columns);
      break;
    }
  }
  const Tensor a = RandomTensor({rows, 64}, rng);
  const std::vector<Tensor> want = Evaluate(separate, {a}, threads);
  const std::vector<Tensor> got = Evaluate(fused, {a}, threads);
  ASSERT_EQ(got.size(), siblings.size());
  ASSERT_EQ(want.size(), siblings.size());
  for (size_t i = 0; i < got.size(); ++i) ExpectMatches(got[i], want[i], 0.0, Cat("output ", i));
}

TEST(FuseSiblingNBits, QkvOfOneActivationAreOneNodeBitForBit) {
  // Column counts that are and are not multiples of the kernels' column steps.
  const std::vector<Sibling> qkv = {{40}, {24}, {17}};
  for (int level : {0, 4}) {
    for (int64_t rows : {1, 5}) {
      for (int threads : {1, 2}) CheckFusion(qkv, rows, level, threads, 1, {40, 24, 17});
    }
  }
}

TEST(FuseSiblingNBits, ZeroPointsAndBiasesGoSideBySideToo) {
  const std::vector<Sibling> with = {{32, 64, true, true}, {48, 64, true, true}};
  for (int level : {0, 4}) CheckFusion(with, 3, level, 2, 1, {32, 48});
}

// Only nodes alike fuse: zero points on one and not on the other, or another activation, keep
// them apart; the two alike of four still fuse.
TEST(FuseSiblingNBits, NodesThatDifferStayApart) {
  const std::vector<Sibling> mixed = {{16}, {32, 64, true}, {24}, {16, 32}};
  CheckFusion(mixed, 2, 0, 1, 3, {16, 24});
}

// A node whose constants do not fit its own N stays apart (the compile fuzzer's input: one node
// reads another's bias, 8 values for its 16 columns); fused, the parts would not fill the fused
// constants, and writing them read past their end. The two that fit fuse, and every constant of
// the graph is made with the bytes its shape needs.
TEST(FuseSiblingNBits, ANodeWhoseConstantsDoNotFitItsColumnsStaysApart) {
  std::mt19937 rng(7);
  std::string text =
      ModelText({{16, 64, false, true}, {8, 64, false, true}, {24, 64, false, true}}, 1, 4, rng);
  const std::string own = "(x0, b0, s0, , , c0)";
  ASSERT_NE(text.find(own), std::string::npos) << text;
  text.replace(text.find(own), own.size(), "(x0, b0, s0, , , c1)");
  compile::IrGraph g = Import(text);
  ASSERT_TRUE(compile::LowerMatMulNBits(g).ok());
  ASSERT_TRUE(compile::EliminateIdentityLike(g).ok());
  ASSERT_EQ(CountPacked(g), 3);
  auto stats = compile::FuseSiblingNBitsMatMuls(g);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(CountPacked(g), 2);
  int fused = 0;
  for (const compile::IrNode& n : g.nodes) {
    if (n.op_type != "MatMulNBitsPacked") continue;
    if (n.outputs.size() > 1) {
      ++fused;
      EXPECT_EQ(IntsAttr(n, "output_columns"), (std::vector<int64_t>{8, 24}));
    }
    for (int v : n.inputs) {
      if (v < 0 || !g.values[static_cast<size_t>(v)].is_constant()) continue;
      auto made = compile::Materialize(g.values[static_cast<size_t>(v)].constant);
      ASSERT_TRUE(made.ok()) << made.status().ToString();
      EXPECT_EQ((*made)->bytes.size(), (*made)->AsTensor().byte_size()) << n.name << " input " << v;
    }
  }
  EXPECT_EQ(fused, 1);
}

}  // namespace
}  // namespace epctx::testing::dnnl
