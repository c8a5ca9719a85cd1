// Symbolic shape inference on the exported transformers (dynamic batch and sequence): every
// activation a MatMul reads gets a rank, and each residual Add's operands are known to have the
// same shape, so the compiler fuses it into the matrix product that computes one of them.
#include <gtest/gtest.h>

#include <filesystem>

#include <fmt/format.h>

#include "compile/onnx_import.h"
#include "compile/passes/passes.h"
#include "compile/symbolic/symbolic_shapes.h"
#include "exec/kernels/onednn/post_ops.h"

namespace epctx::compile {
namespace {

std::string ModelPath(const std::string& name) {
  return fmt::format("{}/{}.onnx", EPCTX_TEST_MODELS_DIR, name);
}

struct TransformerCase {
  std::string model;
  int layers;
};

void PrintTo(const TransformerCase& c, std::ostream* os) {
  *os << c.model;
}

class SymbolicTransformer : public ::testing::TestWithParam<TransformerCase> {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(ModelPath(GetParam().model))) {
      GTEST_SKIP() << ModelPath(GetParam().model) << " is missing; run scripts/test.sh";
    }
  }
};

int ResidualFusions(const IrGraph& g) {
  int count = 0;
  for (const IrNode& n : g.nodes) {
    if (n.op_type != "DnnlMatMul") continue;
    const IrAttribute* ops = n.FindAttr("post_ops");
    if (ops == nullptr) continue;
    for (int64_t k : ops->ints) {
      count += k == static_cast<int64_t>(exec::kernels::onednn::PostOpKind::kAddTensor);
    }
  }
  return count;
}

// ONNX's inference leaves about half of the node outputs without a rank (75 of 154 in bert_tiny,
// 64 of 181 in gpt2_tiny, onnx 1.12); after ours none is left.
TEST_P(SymbolicTransformer, EveryNodeOutputHasARank) {
  auto model = ImportModelFile(ModelPath(GetParam().model));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const IrGraph& g = model->graph;
  int outputs = 0;
  for (const IrNode& n : g.nodes) {
    for (int o : n.outputs) {
      if (o < 0) continue;
      ++outputs;
      const IrValue& v = g.values[static_cast<size_t>(o)];
      EXPECT_TRUE(v.shape_known) << n.op_type << " '" << n.name << "' output '" << v.name
                                 << "' has no rank";
    }
  }
  EXPECT_GT(outputs, 100);
}

TEST_P(SymbolicTransformer, EveryMatMulOperandHasARank) {
  auto model = ImportModelFile(ModelPath(GetParam().model));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const IrGraph& g = model->graph;
  int matmuls = 0;
  for (const IrNode& n : g.nodes) {
    if (n.op_type != "MatMul") continue;
    ++matmuls;
    for (int i : n.inputs) {
      const IrValue& v = g.values[static_cast<size_t>(i)];
      EXPECT_TRUE(v.shape_known) << "MatMul '" << n.name << "' reads '" << v.name
                                 << "' of unknown rank";
    }
  }
  EXPECT_GT(matmuls, 0);
}

TEST_P(SymbolicTransformer, ResidualAddsFuseIntoTheMatMul) {
  auto model = ImportModelFile(ModelPath(GetParam().model));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto passes = RunAllPasses(model->graph);
  ASSERT_TRUE(passes.ok()) << passes.status().ToString();
  // Two residual connections per transformer layer: after attention and after the MLP.
  EXPECT_EQ(ResidualFusions(model->graph), 2 * GetParam().layers);
}

INSTANTIATE_TEST_SUITE_P(Models, SymbolicTransformer,
                         ::testing::Values(TransformerCase{"bert_tiny", 2},
                                           TransformerCase{"gpt2_tiny", 2}),
                         [](const auto& info) { return info.param.model; });

}  // namespace
}  // namespace epctx::compile
