// Which MatMulInteger nodes become com.epctx DnnlMatMulInteger: only those the kernel computes
// exactly (uint8 A, constant int8 B with zero point 0, one activation zero point), with the
// weight's column sums added as a constant.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "compile/ir.h"
#include "compile/passes/passes.h"

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

struct Case {
  DataType a_type = DataType::kUint8;
  bool b_constant = true;
  std::vector<int64_t> a_zp_shape = {};  // empty vector: scalar; {-1}: absent
  int8_t b_zp = 0;
};

// MatMulInteger(A [4, 3], B [3, 2], a_zp, b_zp) -> the lowered graph.
IrGraph Lower(const Case& c) {
  IrGraph g;
  g.opsets[""] = 17;
  const int a = AddInput(g, "a", c.a_type, {4, 3});
  const std::vector<int8_t> w{1, -2, 3, 4, -5, 6};
  const int b = c.b_constant ? AddConst<int8_t>(g, "b", DataType::kInt8, {3, 2}, w)
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

}  // namespace
}  // namespace epctx::compile
