// Function ops are replaced by their ONNX-defined bodies only when no kernel implements them.
#include "compile/function_inliner.h"

#include <gtest/gtest.h>
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <string>

#include "compile/contrib/contrib_schemas.h"

namespace epctx::compile {
namespace {

onnx::ModelProto CeluModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(13);
  auto* g = m.mutable_graph();
  auto* n = g->add_node();
  n->set_op_type("Celu");
  n->set_name("celu");
  n->add_input(std::string("x"));
  n->add_output(std::string("y"));
  auto* a = n->add_attribute();
  a->set_name("alpha");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(2.0f);
  return m;
}

TEST(FunctionInliner, ExpandsOpsWithoutKernelsAndBindsAttributes) {
  onnx::ModelProto m = CeluModel();
  auto no_kernels = [](const std::string&, const std::string&, int64_t) { return false; };
  auto expanded = InlineFunctionOps(m, no_kernels, "celu.onnx");
  ASSERT_TRUE(expanded.ok()) << expanded.status().ToString();
  EXPECT_EQ(*expanded, 1);
  ASSERT_GT(m.graph().node_size(), 1);
  bool reads_x = false, writes_y = false, alpha_bound = false;
  for (const auto& n : m.graph().node()) {
    EXPECT_NE(n.op_type(), "Celu");
    EXPECT_EQ(n.name().rfind("celu__Celu_0__", 0), 0u) << n.name();
    for (const auto& in : n.input()) reads_x |= in == "x";
    for (const auto& out : n.output()) writes_y |= out == "y";
    for (const auto& a : n.attribute()) {
      EXPECT_TRUE(a.ref_attr_name().empty()) << "unbound reference in " << n.op_type();
      // Celu's body carries alpha as a Constant tensor built from the node's attribute.
      if (a.type() == onnx::AttributeProto::FLOAT && a.f() == 2.0f) alpha_bound = true;
      if (a.type() == onnx::AttributeProto::TENSOR && a.t().float_data_size() == 1 &&
          a.t().float_data(0) == 2.0f) {
        alpha_bound = true;
      }
    }
  }
  EXPECT_TRUE(reads_x);
  EXPECT_TRUE(writes_y);
  EXPECT_TRUE(alpha_bound) << "the node's alpha=2 did not reach the body";
}

TEST(FunctionInliner, KeepsOpsThatHaveKernels) {
  onnx::ModelProto m = CeluModel();
  auto all_kernels = [](const std::string&, const std::string&, int64_t) { return true; };
  auto expanded = InlineFunctionOps(m, all_kernels, "celu.onnx");
  ASSERT_TRUE(expanded.ok());
  EXPECT_EQ(*expanded, 0);
  ASSERT_EQ(m.graph().node_size(), 1);
  EXPECT_EQ(m.graph().node(0).op_type(), "Celu");
}

// The same Celu, inside the then_branch of an If in the main graph.
onnx::ModelProto CeluInsideIfModel() {
  onnx::ModelProto inner = CeluModel();
  onnx::ModelProto m;
  m.set_ir_version(8);
  *m.mutable_opset_import() = inner.opset_import();
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type("If");
  n->set_name("if");
  n->add_input(std::string("c"));
  n->add_output(std::string("y"));
  auto* then_branch = n->add_attribute();
  then_branch->set_name("then_branch");
  then_branch->set_type(onnx::AttributeProto::GRAPH);
  *then_branch->mutable_g() = inner.graph();
  return m;
}

TEST(FunctionInliner, ExpandsOpsInsideControlFlowBodies) {
  onnx::ModelProto m = CeluInsideIfModel();
  auto only_if = [](const std::string&, const std::string& op, int64_t) { return op == "If"; };
  auto expanded = InlineFunctionOps(m, only_if, "if.onnx");
  ASSERT_TRUE(expanded.ok()) << expanded.status().ToString();
  EXPECT_EQ(*expanded, 1);
  ASSERT_EQ(m.graph().node_size(), 1);
  const onnx::GraphProto& body = m.graph().node(0).attribute(0).g();
  ASSERT_GT(body.node_size(), 1);
  for (const auto& n : body.node()) {
    EXPECT_NE(n.op_type(), "Celu");
    EXPECT_EQ(n.name().rfind("celu__Celu_0__", 0), 0u) << n.name();
  }
}

// A model of the default domain's opset 17 and com.microsoft's, parsed from `graph` (onnx's text
// format), with the contrib schemas registered.
onnx::ModelProto ContribModel(const std::string& graph) {
  RegisterContribSchemas();
  const std::string text =
      "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n" + graph;
  onnx::ModelProto m;
  onnx::Status parsed = onnx::OnnxParser::Parse(m, text.c_str());
  EXPECT_TRUE(parsed.IsOK()) << parsed.ErrorMessage();
  return m;
}

// Expands `m` as if no op had a kernel, keeping the refusals in `refusals`.
Result<int> InlineWithoutKernels(onnx::ModelProto& m,
                                 std::map<std::string, std::string>* refusals) {
  auto no_kernels = [](const std::string&, const std::string&, int64_t) { return false; };
  return InlineFunctionOps(m, no_kernels, "contrib.onnx", refusals);
}

// A float16 com.microsoft node is expanded as its float32 body: Casts to float32 of the float16
// inputs, the body, a Cast back to float16 of the output.
TEST(FunctionInliner, Float16ContribNodeIsExpandedInFloat32BetweenCasts) {
  onnx::ModelProto m = ContribModel(
      "agraph (float16[1, 3, 8] q, float16[1, 3, 8] k, float16[1, 3, 8] v) => (float16[1, 3, 8] y)"
      "\n{\n  y = com.microsoft.MultiHeadAttention<num_heads = 2>(q, k, v)\n}\n");
  std::map<std::string, std::string> refusals;
  auto expanded = InlineWithoutKernels(m, &refusals);
  ASSERT_TRUE(expanded.ok()) << expanded.status().ToString();
  EXPECT_EQ(*expanded, 1);
  EXPECT_TRUE(refusals.empty());
  std::map<std::string, int> to_float32;  // graph input -> Casts to float32 reading it
  int to_float16_writing_y = 0;
  for (const auto& n : m.graph().node()) {
    EXPECT_NE(n.op_type(), "MultiHeadAttention");
    if (n.op_type() != "Cast") continue;
    ASSERT_EQ(n.attribute_size(), 1);
    if (n.attribute(0).i() == onnx::TensorProto::FLOAT) to_float32[n.input(0)]++;
    if (n.attribute(0).i() == onnx::TensorProto::FLOAT16 && n.output(0) == "y") {
      to_float16_writing_y++;
    }
  }
  EXPECT_EQ(to_float32, (std::map<std::string, int>{{"k", 1}, {"q", 1}, {"v", 1}}));
  EXPECT_EQ(to_float16_writing_y, 1);
}

// Why a body was not built is kept by node, for the caller to log once when the rounds end.
TEST(FunctionInliner, RefusalsAreKeptByNode) {
  onnx::ModelProto m = ContribModel(
      "agraph (float[1, 3, 8] x, float[8, 24] w, float[24] b, int32[1, 1, 3, 3] mask) => "
      "(float[1, 3, 8] y)\n"
      "{\n  y = com.microsoft.Attention<num_heads = 2>(x, w, b, mask)\n}\n");
  std::map<std::string, std::string> refusals;
  auto expanded = InlineWithoutKernels(m, &refusals);
  ASSERT_TRUE(expanded.ok()) << expanded.status().ToString();
  EXPECT_EQ(*expanded, 0);
  // The parser names no node: the key is its first output.
  EXPECT_EQ(refusals, (std::map<std::string, std::string>{
                          {"y",
                           "node 'y': com.microsoft.Attention is not expanded into ONNX "
                           "operators: a 4-D (Megatron) mask_index is not supported"}}));
}

}  // namespace
}  // namespace epctx::compile
