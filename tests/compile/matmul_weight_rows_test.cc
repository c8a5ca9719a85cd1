// A MatMul weight whose rows are a multiple of 1 KiB is stored with 16 more floats per row where
// oneDNN reads it in its plain layout (weight_packing.cc, PadAliasingRows), and the product is
// the same at every row count: the packed shape's and the others, which read the stored layout.
#include <gtest/gtest.h>

#include "compile/dnnl_graph_helpers.h"
#include "compile/passes/passes.h"
#include "exec/kernels/onednn/weight_format.h"

namespace epctx::testing::dnnl {
namespace {

constexpr int64_t kK = 48;

// The one DnnlMatMul of the optimised graph's stored weight layout.
::dnnl::memory::desc StoredLayout(const compile::IrGraph& g) {
  for (const compile::IrNode& n : g.nodes) {
    if (n.op_type != "DnnlMatMul") continue;
    auto desc = exec::kernels::onednn::DecodeBlockedWeightFormat(IntsAttr(n, "weights_format"));
    EXPECT_TRUE(desc.ok()) << desc.status().ToString();
    if (desc.ok()) return *desc;
  }
  ADD_FAILURE() << "no DnnlMatMul with a blocked weight layout";
  return {};
}

void CheckWeightOfWidth(int64_t n, bool padded) {
  ModelBuilder b(static_cast<uint32_t>(n));
  const std::string x = b.Input("x", {1, -1, kK}, {"", "rows", ""});
  b.Output(b.Node("MatMul", {x, b.Weight({kK, n}, -1.0f, 1.0f)}));
  compile::IrGraph g;
  for (int64_t rows : {1, 37, 128}) {
    g = OptimiseAndCompareWithin(b, {RandomTensor({1, rows, kK}, b.rng())}, 1e-5,
                                 Cat("N = ", n, ", ", rows, " rows"));
  }
  ASSERT_EQ(CountOps(g, "DnnlMatMul"), 1);
  const dnnl_memory_desc_t& md = StoredLayout(g).data;
  if (md.format_desc.blocking.inner_nblks != 0) {
    GTEST_SKIP() << "oneDNN stores this CPU's matmul weights blocked, not in rows";
  }
  EXPECT_EQ(md.format_desc.blocking.strides[0], padded ? n + 16 : n) << "N = " << n;
  EXPECT_EQ(md.format_desc.blocking.strides[1], 1);
}

TEST(MatMulWeightRows, RowsOfAMultipleOf1KiBAreLonger) {
  CheckWeightOfWidth(256, true);
  CheckWeightOfWidth(768, true);
  CheckWeightOfWidth(1536, true);
  CheckWeightOfWidth(2048, true);
}

TEST(MatMulWeightRows, OtherRowsStayAsOneDnnChose) {
  CheckWeightOfWidth(1000, false);
  CheckWeightOfWidth(576, false);
  CheckWeightOfWidth(640, false);
}

}  // namespace
}  // namespace epctx::testing::dnnl
