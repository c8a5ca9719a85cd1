// Original models that crashed ONNX 1.12's shape inference inside the import (SIGFPE on a zero
// stride, stack overflow on a recursive function) are refused with an error naming the node or
// the function; and the import's own STFT shape inference gives the frame count ONNX specifies.
#include <gtest/gtest.h>
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include <fmt/format.h>

#include <string>

#include "compile/onnx_import.h"
#include "compile/onnx_precheck.h"

namespace epctx::compile {
namespace {

onnx::ModelProto Parse(const std::string& text) {
  onnx::ModelProto model;
  onnx::Status parsed = onnx::OnnxParser::Parse(model, text.c_str());
  EXPECT_TRUE(parsed.IsOK()) << parsed.ErrorMessage();
  return model;
}

Result<ImportedModel> Import(const onnx::ModelProto& model) {
  std::string bytes = model.SerializeAsString();
  return ImportModelBytes(std::as_bytes(std::span<const char>(bytes)), "hostile.onnx", "");
}

std::string WithNode(const std::string& inputs, const std::string& output,
                     const std::string& node) {
  return fmt::format("<ir_version: 8, opset_import: [\"\" : 17]>\nagraph ({}) => ({}) {{\n{}\n}}\n",
                     inputs, output, node);
}

struct HostileCase {
  const char* name;
  std::string model;
  std::string message;
};

class HostileAttributeTest : public ::testing::TestWithParam<HostileCase> {};

TEST_P(HostileAttributeTest, IsRefusedNamingTheNode) {
  auto imported = Import(Parse(GetParam().model));
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(imported.status().message(), GetParam().message);
}

constexpr const char* kImage = "float[1, 1, 8, 8] x";
constexpr const char* kFilter = "float[1, 1, 8, 8] x, float[1, 1, 3, 3] w";

INSTANTIATE_TEST_SUITE_P(
    Catalogue, HostileAttributeTest,
    ::testing::Values(
        HostileCase{"ConvZeroStrides",
                    WithNode(kFilter, "float[1, 1, 6, 6] y", "y = Conv<strides = [0, 0]>(x, w)"),
                    "'hostile.onnx': node 'Conv_0' (Conv): attribute 'strides' has 0; it must be "
                    "from 1 to 2147483647"},
        HostileCase{"ConvIntegerZeroStride",
                    WithNode("uint8[1, 1, 8, 8] x, uint8[1, 1, 3, 3] w", "int32[1, 1, 6, 6] y",
                             "y = ConvInteger<strides = [1, 0]>(x, w)"),
                    "'hostile.onnx': node 'ConvInteger_0' (ConvInteger): attribute 'strides' has "
                    "0; it must be from 1 to 2147483647"},
        HostileCase{"MaxPoolZeroStride",
                    WithNode(kImage, "float[1, 1, 4, 4] y",
                             "y = MaxPool<kernel_shape = [2, 2], strides = "
                             "[1, 0]>(x)"),
                    "'hostile.onnx': node 'MaxPool_0' (MaxPool): attribute 'strides' has 0; it "
                    "must be from 1 to 2147483647"},
        HostileCase{
            "AveragePoolZeroKernel",
            WithNode(kImage, "float[1, 1, 4, 4] y", "y = AveragePool<kernel_shape = [0, 2]>(x)"),
            "'hostile.onnx': node 'AveragePool_0' (AveragePool): attribute "
            "'kernel_shape' has 0; it must be from 1 to 2147483647"},
        HostileCase{"LpPoolNegativeStride",
                    WithNode(kImage, "float[1, 1, 4, 4] y",
                             "y = LpPool<kernel_shape = [2, 2], strides = [-1, 1]>(x)"),
                    "'hostile.onnx': node 'LpPool_0' (LpPool): attribute 'strides' has -1; it "
                    "must be from 1 to 2147483647"},
        HostileCase{"ConvTransposeZeroDilation",
                    WithNode(kFilter, "float[1, 1, 10, 10] y",
                             "y = ConvTranspose<dilations = [0, 0]>(x, w)"),
                    "'hostile.onnx': node 'ConvTranspose_0' (ConvTranspose): attribute "
                    "'dilations' has 0; it must be from 1 to 2147483647"},
        HostileCase{"DepthToSpaceHugeBlock",
                    WithNode("float[1, 4, 2, 2] x", "float[1, 1, 4, 4] y",
                             "y = DepthToSpace<blocksize = 4294967296>(x)"),
                    "'hostile.onnx': node 'DepthToSpace_0' (DepthToSpace): attribute 'blocksize' "
                    "has 4294967296; it must be from 1 to 2147483647"},
        HostileCase{"ZeroStrideInsideABody",
                    WithNode("bool c, float[1, 1, 8, 8] x", "float[1, 1, 4, 4] y",
                             "y = If(c) <then_branch = t () => (float[1, 1, 4, 4] a) { a = "
                             "MaxPool<kernel_shape = [2, 2], strides = [0, 2]>(x) }, "
                             "else_branch = e () => (float[1, 1, 4, 4] b) { b = MaxPool<"
                             "kernel_shape = [2, 2], strides = [2, 2]>(x) }>"),
                    "'hostile.onnx': node 'MaxPool_0' (MaxPool): attribute 'strides' has 0; it "
                    "must be from 1 to 2147483647"}),
    [](const ::testing::TestParamInfo<HostileCase>& info) { return info.param.name; });

onnx::FunctionProto Function(const std::string& name, const std::string& calls) {
  onnx::FunctionProto f;
  f.set_domain("local");
  f.set_name(name);
  f.add_input("a");
  f.add_output("b");
  auto* n = f.add_node();
  n->set_domain(calls.empty() ? "" : "local");
  n->set_op_type(calls.empty() ? "Identity" : calls);
  n->add_input("a");
  n->add_output("b");
  for (const char* domain : {"", "local"}) {
    auto* op = f.add_opset_import();
    op->set_domain(domain);
    op->set_version(domain[0] ? 1 : 17);
  }
  return f;
}

// y = local.<entry>(x), with the given functions.
onnx::ModelProto WithFunctions(const std::string& entry,
                               const std::vector<onnx::FunctionProto>& functions) {
  onnx::ModelProto m = Parse(WithNode("float[2] x", "float[2] y", "y = Identity(x)"));
  auto* n = m.mutable_graph()->mutable_node(0);
  n->set_domain("local");
  n->set_op_type(entry);
  auto* op = m.add_opset_import();
  op->set_domain("local");
  op->set_version(1);
  for (const auto& f : functions) *m.add_functions() = f;
  return m;
}

TEST(HostileFunctions, FunctionCallingItselfIsRefused) {
  auto imported = Import(WithFunctions("F", {Function("F", "F")}));
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().message(),
            "'hostile.onnx': model-local function 'local.F' calls itself (local.F -> local.F); "
            "recursion is not allowed");
}

TEST(HostileFunctions, FunctionsCallingEachOtherAreRefused) {
  auto imported =
      Import(WithFunctions("F", {Function("F", "G"), Function("G", "H"), Function("H", "G")}));
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().message(),
            "'hostile.onnx': model-local function 'local.G' calls itself (local.G -> local.H -> "
            "local.G); recursion is not allowed");
}

TEST(HostileFunctions, DeepCallChainIsRefused) {
  std::vector<onnx::FunctionProto> chain;
  for (int i = 0; i <= kMaxFunctionCallDepth; ++i) {
    std::string next = i < kMaxFunctionCallDepth ? fmt::format("F{}", i + 1) : "";
    chain.push_back(Function(fmt::format("F{}", i), next));
  }
  auto imported = Import(WithFunctions("F0", chain));
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().message(),
            "'hostile.onnx': model-local functions call each other more than 32 deep (from "
            "'local.F0')");
}

TEST(HostileFunctions, OtherFunctionsAreUnsupported) {
  auto imported = Import(WithFunctions("F", {Function("F", "G"), Function("G", "")}));
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(imported.status().message(),
            "'hostile.onnx': model-local functions are not supported (function 'F')");
}

// An If nested `depth` deep, the innermost returning x.
onnx::ModelProto NestedIfs(int depth) {
  std::string body = "r = Identity(x)";
  for (int i = 0; i < depth; ++i) {
    body = fmt::format(
        "r = If(c) <then_branch = t{0} () => (float[2] r) {{ {1} }}, else_branch = e{0} () => "
        "(float[2] r) {{ r = Identity(x) }}>",
        i, body);
  }
  return Parse(WithNode("bool c, float[2] x", "float[2] r", body));
}

TEST(HostileNesting, BodiesNestedDeeperThanTheLimitAreRefused) {
  auto ok = Import(NestedIfs(kMaxGraphNesting));
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
  auto deep = Import(NestedIfs(kMaxGraphNesting + 1));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().message(),
            "'hostile.onnx': node 'If_0' (If) nests control-flow bodies more than 16 deep");
}

// STFT with the log-mel front end's sizes: 16400 samples, step 160, a 400-sample window.
std::string StftModel(const std::string& extra_inputs, const std::string& call, int onesided) {
  return fmt::format(
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "agraph (float[1, 16400, 1] signal{}) => (float[1, N, B, 2] spectrum)\n"
      "<int64 step = {{160}}, int64 zero_step = {{0}}, int64 frame = {{400}}, int64 other = "
      "{{512}}>\n{{\n  spectrum = STFT<onesided = {}>({})\n}}\n",
      extra_inputs, onesided, call);
}

std::vector<int64_t> OutputShape(const ImportedModel& m) {
  return m.graph.values[static_cast<size_t>(m.graph.outputs.at(0))].shape;
}

// Found by tests/fuzz/onnx_import_fuzzer (corpus/onnx_import/regression_convtranspose_rank1_weight
// and regression_qlinearconv_rank3_input): onnx 1.12's inference of a convolution read the dims
// of a weight whose rank differs from the input's past their end, and the import died with
// SIGSEGV. Now that node's inference fails, which is not fatal to the import (as with STFT
// below): the output keeps only what the model declares.
TEST(HostileShapes, ConvolutionWeightOfAnotherRankInfersNothing) {
  auto transposed = Import(Parse(WithNode("float[1, 1, 3, 3] x, float[3] w", "float[1, 2, N, 5] y",
                                          "y = ConvTranspose(x, w)")));
  ASSERT_TRUE(transposed.ok()) << transposed.status().ToString();
  EXPECT_EQ(OutputShape(*transposed), (std::vector<int64_t>{1, 2, -1, 5}));
  auto quantized = Import(Parse(WithNode(
      "uint8[1, 7, 7] x, float xs, uint8 xz, uint8[1, 1, 1, 1] w, float ws, uint8 wz, float ys, "
      "uint8 yz",
      "uint8[1, 1, N] y", "y = QLinearConv(x, xs, xz, w, ws, wz, ys, yz)")));
  ASSERT_TRUE(quantized.ok()) << quantized.status().ToString();
  EXPECT_EQ(OutputShape(*quantized), (std::vector<int64_t>{1, 1, -1}));
}

// Found by tests/fuzz/onnx_import_fuzzer (corpus/onnx_import/
// regression_convtranspose_sparse_weight): a ConvTranspose weight declared a sparse tensor, with a
// shape, was read by onnx 1.12's inference as a dense tensor of no dims (SIGSEGV). That node's
// inference now fails, and the import goes on to refuse the sparse input with its reason.
TEST(HostileShapes, ConvolutionWeightThatIsNotADenseTensorIsRefused) {
  for (const char* op : {"ConvTranspose", "Conv"}) {
    onnx::ModelProto model =
        Parse(WithNode("float[1, 1, 3, 3] x, float[1, 2, 3, 3] w", "float[1, 2, N, 5] y",
                       std::string("y = ") + op + "(x, w)"));
    onnx::TypeProto& w = *model.mutable_graph()->mutable_input(1)->mutable_type();
    onnx::TypeProto::SparseTensor sparse;
    sparse.set_elem_type(w.tensor_type().elem_type());
    *sparse.mutable_shape() = w.tensor_type().shape();
    *w.mutable_sparse_tensor_type() = sparse;
    auto imported = Import(model);
    ASSERT_FALSE(imported.ok()) << op;
    EXPECT_EQ(imported.status().code(), StatusCode::kUnsupported) << op;
    EXPECT_EQ(imported.status().message(),
              "'hostile.onnx': value 'w' is not a tensor, a sequence of tensors or an optional of "
              "either (maps, sparse tensors and nested sequences are not supported)")
        << op;
  }
}

// Found by tests/fuzz/run_fuzzer (corpus/onnx_import/regression_lstm5_rank1_input): onnx 1.12's
// inference of RNN, LSTM (versions 1-6) and GRU (3-6) read the input's first two dims without
// checking its rank, and an input of rank 1 died with SIGSEGV. Now that node's inference fails.
TEST(HostileShapes, RecurrentInputOfAnotherRankInfersNothing) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    const int gates = std::string(op) == "LSTM" ? 4 : std::string(op) == "GRU" ? 3 : 1;
    auto imported = Import(Parse(fmt::format(
        "<ir_version: 3, opset_import: [\"\" : 5]>\nagraph (float[2] x, float[1, {0}, 2] w, "
        "float[1, {0}, 3] r) => (float[1, 1, N] y_h) {{\n  y, y_h = {1}<hidden_size = 3>(x, w, "
        "r)\n}}\n",
        3 * gates, op)));
    ASSERT_TRUE(imported.ok()) << op << ": " << imported.status().ToString();
    EXPECT_EQ(OutputShape(*imported), (std::vector<int64_t>{1, 1, -1})) << op;
  }
}

// Found by tests/fuzz/compile_fuzzer (corpus/onnx_import/lstm_sparse_input_rank1.onnx): the same
// recurrent inference read a sparse X of rank 1 as a dense one (SIGSEGV). That node's inference
// now fails, and the import goes on to refuse the sparse input with its reason.
TEST(HostileShapes, RecurrentInputThatIsNotADenseTensorIsRefused) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    const int gates = std::string(op) == "LSTM" ? 4 : std::string(op) == "GRU" ? 3 : 1;
    onnx::ModelProto model = Parse(fmt::format(
        "<ir_version: 3, opset_import: [\"\" : 5]>\nagraph (float[2] x, float[1, {0}, 2] w, "
        "float[1, {0}, 3] r) => (float[1, 1, N] y_h) {{\n  y, y_h = {1}<hidden_size = 3>(x, w, "
        "r)\n}}\n",
        3 * gates, op));
    onnx::TypeProto& x = *model.mutable_graph()->mutable_input(0)->mutable_type();
    onnx::TypeProto::SparseTensor sparse;
    sparse.set_elem_type(x.tensor_type().elem_type());
    *sparse.mutable_shape() = x.tensor_type().shape();
    *x.mutable_sparse_tensor_type() = sparse;
    auto imported = Import(model);
    ASSERT_FALSE(imported.ok()) << op;
    EXPECT_EQ(imported.status().code(), StatusCode::kUnsupported) << op;
    EXPECT_EQ(imported.status().message(),
              "'hostile.onnx': value 'x' is not a tensor, a sequence of tensors or an optional of "
              "either (maps, sparse tensors and nested sequences are not supported)")
        << op;
  }
}

// Found on a Llama-style graph whose MatMuls are com.microsoft MatMulNBits: onnx 1.12 gives the
// output of an operator it has no schema for no type, and the inference of a Shape two nodes
// later read that missing type (SIGSEGV). Such operators and every node after them get no onnx
// inference; the import goes on, and the values keep what the model declares.
TEST(HostileShapes, ShapeChainAfterAnOperatorOnnxDoesNotKnowImports) {
  for (const char* between : {"Transpose", "Reshape", "Relu"}) {
    const std::string reshape_to = std::string(between) == "Reshape" ? ", target" : "";
    auto imported = Import(Parse(
        fmt::format("<ir_version: 8, opset_import: [\"\" : 17, \"ai.example\" : 1]>\n"
                    "agraph (float[2, 3] x) => (int64[2] s) <int64[2] target = {{3, 2}}>\n{{\n"
                    "  y = ai.example.Mystery(x)\n  z = {}(y{})\n  s = Shape(z)\n}}\n",
                    between, reshape_to)));
    ASSERT_TRUE(imported.ok()) << between << ": " << imported.status().ToString();
    ASSERT_EQ(imported->graph.nodes.size(), 3u) << between;
    EXPECT_EQ(imported->graph.nodes[0].op_type, "Mystery");
    EXPECT_EQ(imported->graph.nodes[0].domain, "ai.example");
    EXPECT_EQ(OutputShape(*imported), (std::vector<int64_t>{2})) << between;
  }
}

TEST(StftShape, FramesAreCountedFromTheFrameLength) {
  auto onesided = Import(Parse(StftModel(", float[400] window", "signal, step, window", 1)));
  ASSERT_TRUE(onesided.ok()) << onesided.status().ToString();
  // onnx 1.12 says 102 frames: (16400 - 201) / 160 + 1.
  EXPECT_EQ(OutputShape(*onesided), (std::vector<int64_t>{1, 101, 201, 2}));
  auto full = Import(Parse(StftModel(", float[400] window", "signal, step, window", 0)));
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(OutputShape(*full), (std::vector<int64_t>{1, 101, 400, 2}));
  auto no_window = Import(Parse(StftModel("", "signal, step, , frame", 1)));
  ASSERT_TRUE(no_window.ok()) << no_window.status().ToString();
  EXPECT_EQ(OutputShape(*no_window), (std::vector<int64_t>{1, 101, 201, 2}));
  // A frame_length that agrees with the window (onnx 1.12 gave up on this one).
  auto both = Import(Parse(StftModel(", float[400] window", "signal, step, window, frame", 1)));
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(OutputShape(*both), (std::vector<int64_t>{1, 101, 201, 2}));
}

// Shape inference errors are not fatal to the import (the kernel checks the values when it
// runs); the output keeps only what the model declares.
TEST(StftShape, InconsistentArgumentsInferNothing) {
  for (const char* call : {"signal, zero_step, window", "signal, step, window, other"}) {
    auto imported = Import(Parse(StftModel(", float[400] window", call, 1)));
    ASSERT_TRUE(imported.ok()) << imported.status().ToString();
    EXPECT_EQ(OutputShape(*imported), (std::vector<int64_t>{1, -1, -1, 2})) << call;
  }
}

}  // namespace
}  // namespace epctx::compile
