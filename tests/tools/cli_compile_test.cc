// `epctx compile` with several models (one shared blob), --list, -i and -v.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include <fmt/format.h>

#include "epctx/compiler.h"
#include "tools/tools_test_helpers.h"

namespace epctx {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using tools_testing::CommandResult;
using tools_testing::RunCli;
using tools_testing::TempDir;

std::string Model(const std::string& name) {
  return fmt::format("{}/{}.onnx", EPCTX_TEST_MODELS_DIR, name);
}

TEST(CliCompileTest, SeveralModelsShareOneBlob) {
  TempDir dir;
  std::string out = dir / "out";
  CommandResult r = RunCli({"compile", "-m", Model("resnet18_cls"), "-m", Model("resnet18_reg"),
                            "--output-dir", out, "-v"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("compiled  " + Model("resnet18_cls") + " -> " + out +
                               "/resnet18_cls_ctx.onnx"));
  EXPECT_THAT(r.out, HasSubstr("shared blob: " + out + "/resnet18_cls_shared.epctx"));
  EXPECT_THAT(r.err, HasSubstr("[1/2] compiling '" + Model("resnet18_cls") + "'"));
  EXPECT_THAT(r.err, HasSubstr("[2/2] compiling '" + Model("resnet18_reg") + "'"));
  EXPECT_TRUE(std::filesystem::exists(out + "/resnet18_reg_ctx.onnx"));
  EXPECT_FALSE(std::filesystem::exists(out + "/resnet18_cls_ctx.epctx"));

  // Each context model runs from the shared blob.
  CommandResult run =
      RunCli({"run", out + "/resnet18_reg_ctx.onnx", "--input",
              "input=" + std::string(EPCTX_TEST_MODELS_DIR) + "/resnet18_reg.input.npy", "-v"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err,
              HasSubstr("session from context blob '" + out + "/resnet18_cls_shared.epctx'"));
}

TEST(CliCompileTest, RepeatedNamesGetSuffixesWithAWarning) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "a");
  std::filesystem::create_directories(dir.path() / "b");
  std::filesystem::copy_file(Model("mobilenet_v2"), dir / "a/model.onnx");
  std::filesystem::copy_file(Model("mobilenet_v2"), dir / "b/model.onnx");
  CommandResult r = RunCli({"compile", "-m", dir / "a/model.onnx", "-m", dir / "b/model.onnx",
                            "--output-dir", dir / "out"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "out/model_ctx.onnx"));
  EXPECT_TRUE(std::filesystem::exists(dir / "out/model_1_ctx.onnx"));
  const std::string warning = "epctx: warning: another model is also named 'model': '" +
                              (dir / "b/model.onnx") + "' is written as '" +
                              (dir / "out/model_1_ctx.onnx") + "'\n";
  EXPECT_THAT(r.err, HasSubstr(warning));
  // Once: the library logs it, and the command line shows its log in this form only.
  const std::string body = "another model is also named";
  EXPECT_EQ(r.err.find(body), r.err.rfind(body)) << r.err;
}

TEST(CliCompileTest, AFailingModelIsReportedAndNothingIsWritten) {
  TempDir dir;
  tools_testing::WriteStringToFile(dir / "broken.onnx", "broken");
  CommandResult r = RunCli({"compile", "-m", Model("mobilenet_v2"), "-m", dir / "broken.onnx",
                            "--output-dir", dir / "out"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("compiled  " + Model("mobilenet_v2")));
  EXPECT_THAT(r.out, HasSubstr("FAILED    " + (dir / "broken.onnx") + ": InvalidArgument: '" +
                               (dir / "broken.onnx") + "': not an ONNX model"));
  EXPECT_THAT(r.err, HasSubstr("nothing was written"));
  EXPECT_TRUE(std::filesystem::is_empty(dir / "out"));
}

TEST(CliCompileTest, ListShowsTargetLayoutsAndOperators) {
  CommandResult r = RunCli({"compile", "--list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Operators: the ONNX domain's, the contrib ops the engine implements, and epctx's own last,
  // one a line, with the opset each runs from.
  EXPECT_THAT(r.out, HasSubstr("\n  ai.onnx Conv from opset 1; input 0: float32\n"));
  EXPECT_THAT(r.out, HasSubstr("\n  ai.onnx Cast from opset 6; input 0: every type; string tensors "
                               "too\n"));
  EXPECT_THAT(r.out, HasSubstr("\n  ai.onnx SequenceAt from opset 11; input 0: every type; "
                               "string tensors too; sequences and optionals too\n"));
  EXPECT_THAT(r.out, HasSubstr("\n  ai.onnx Constant from opset 1 (made a constant at import)\n"));
  // Types the kernel refuses for some attributes are named after the types.
  EXPECT_THAT(r.out, HasSubstr("\n  ai.onnx Resize from opset 10; input 0: every type but string; "
                               "modes linear and cubic: float32 and float16 only\n"));
  EXPECT_THAT(r.out, HasSubstr("\n  com.microsoft MatMulNBits from opset 1; input 0: float32\n"));
  EXPECT_THAT(r.out, HasSubstr("\n  com.microsoft GroupQueryAttention from opset 1; input 0: "
                               "float32\n"));
  EXPECT_THAT(r.out, HasSubstr("\n  com.microsoft MultiHeadAttention from opset 1 (expanded into "
                               "ONNX operators at compile)\n"));
  EXPECT_THAT(r.out,
              HasSubstr("\n  com.epctx DnnlConv (epctx's own, written by its compile passes); "
                        "input 0: float32\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("Mystery")));
  EXPECT_LT(r.out.find("com.microsoft MatMulNBits"), r.out.find("com.epctx Attention"));
  EXPECT_LT(r.out.find("ai.onnx Add from"), r.out.find("ai.onnx Constant from"));
  EXPECT_LT(r.out.find("ai.onnx Constant from"), r.out.find("ai.onnx Conv from"));
  const std::vector<std::string> ops = SupportedOperatorLines();
  EXPECT_GT(ops.size(), 150u);
  EXPECT_THAT(r.out, HasSubstr(fmt::format("operators ({}; a node whose model imports an older "
                                           "opset of the domain is refused):",
                                           ops.size())));
  // Element types: named sets, lists, and the value that decides them where it is not input 0.
  EXPECT_THAT(r.out, HasSubstr("\n  ai.onnx Abs from opset 6; input 0: numeric types\n"));
  EXPECT_THAT(r.out, HasSubstr("\n  ai.onnx Sqrt from opset 6; input 0: float types\n"));
  EXPECT_THAT(r.out,
              HasSubstr("\n  ai.onnx Clip from opset 6; input 0: numeric types (opsets 6 to 10: "
                        "float32)\n"));
  EXPECT_THAT(r.out, HasSubstr("\n  ai.onnx ReduceSum from opset 1; input 0: float32, float64, "
                               "int8, int32, int64, uint8\n"));
  EXPECT_THAT(r.out, HasSubstr("\n  ai.onnx Where from opset 9; input 1: every type; string "
                               "tensors too\n"));
  EXPECT_THAT(r.out, HasSubstr("\n  ai.onnx ConstantOfShape from opset 9; output 0: every type "
                               "but string\n"));
  EXPECT_THAT(r.out, HasSubstr("\nelement types: each operator's line names the value"));
  EXPECT_THAT(r.out, HasSubstr("hardware_architecture: x86_64:"));
  EXPECT_THAT(r.out, HasSubstr("usable on this CPU:    yes"));
  EXPECT_THAT(r.out, HasSubstr("2 gemm-b-transposed"));
  EXPECT_THAT(r.out, HasSubstr("3 onednn"));
  EXPECT_THAT(r.out, HasSubstr("kernel library:        oneDNN 2."));
  EXPECT_THAT(r.out, HasSubstr("kernel ISA:            "));
  EXPECT_THAT(r.out,
              HasSubstr(CurrentCompileTarget().int8_vnni
                            ? "int8 kernels:          oneDNN with VNNI, for every int8 weight"
                            : "int8 kernels:          oneDNN without VNNI, for int8 weights "
                              "within [-64, 64] (others on exact kernels of epctx)"));
}

// --target packs for a lower CPU tier than this one: the blob says so, and still runs here
// (oneDNN's AVX2 kernels read the AVX2 layouts) with the reference outputs.
TEST(CliCompileTest, TargetPacksForALowerTier) {
  TempDir dir;
  const std::string ctx = dir / "r18_ctx.onnx";
  CommandResult r = RunCli({"compile", Model("resnet18_cls"), "-o", ctx, "--target", "avx2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CommandResult inspect = RunCli({"inspect", ctx});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_THAT(inspect.out, HasSubstr(";kernels=avx2,"));
  const std::string models = EPCTX_TEST_MODELS_DIR;
  CommandResult run = RunCli({"run", ctx, "--input", "input=" + models + "/resnet18_cls.input.npy",
                              "--output-dir", dir / "out", "-C", "epctx.fallback|deny"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  CommandResult cmp =
      RunCli({"compare", dir / "out/output.npy", models + "/resnet18_cls.output.npy", "--rtol",
              "1e-4", "--atol", "1e-4"});
  EXPECT_EQ(cmp.exit_code, 0) << cmp.out << cmp.err;
  CommandResult bad = RunCli({"compile", Model("resnet18_cls"), "-o", ctx, "--target", "sse"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--target"));
}

TEST(CliCompileTest, EngineOptionsAndContextOptions) {
  TempDir dir;
  CommandResult r = RunCli({"compile", Model("mobilenet_v2"), "-o", dir / "m_ctx.onnx", "-C",
                            "ep.context_embed_mode|1", "-i", "session.intra_op_num_threads|1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("embedded in the context model"));
  CommandResult bad = RunCli(
      {"compile", Model("mobilenet_v2"), "-o", dir / "n_ctx.onnx", "-i", "epctx.no_such_key|1"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("unknown option \"epctx.no_such_key\""));
  CommandResult help = RunCli({"compile", "--help"});
  EXPECT_THAT(help.out, HasSubstr("ep.share_ep_contexts (default \"0\")"));
  EXPECT_THAT(help.out, HasSubstr("epctx.fallback (default \"allow\")"));
}

// A model with nodes no kernel runs is refused when it is compiled, naming each node with its op
// and the kernel's reason, and nothing is written; --allow-unsupported writes it anyway.
TEST(CliCompileTest, ModelNoSessionCanRunIsRefusedNamingTheNodes) {
  TempDir dir;
  CommandResult made = tools_testing::RunPython(
      "import onnx\n"
      "from onnx import helper, TensorProto\n"
      "nodes = [helper.make_node('Mystery', ['x'], ['y'], domain='ai.example', name='odd'),\n"
      "         helper.make_node('Relu', ['y'], ['z'], name='relu'),\n"
      "         helper.make_node('MatMulNBits', ['z', 'B', 'S'], ['w'], domain='com.microsoft',\n"
      "                          name='q2', K=32, N=4, bits=2, block_size=32)]\n"
      "inits = [helper.make_tensor('B', TensorProto.UINT8, [4, 1, 8], [0] * 32),\n"
      "         helper.make_tensor('S', TensorProto.FLOAT, [4], [1.0] * 4)]\n"
      "g = helper.make_graph(nodes, 'g', [helper.make_tensor_value_info('x', TensorProto.FLOAT, "
      "[1, 32])],\n"
      "                      [helper.make_tensor_value_info('w', TensorProto.FLOAT, [1, 4])], "
      "inits)\n"
      "m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17),\n"
      "    helper.make_opsetid('ai.example', 1), helper.make_opsetid('com.microsoft', 1)])\n"
      "onnx.save(m, 'mystery.onnx')\n",
      dir.path());
  ASSERT_EQ(made.exit_code, 0) << made.err;
  CommandResult r = RunCli({"compile", dir / "mystery.onnx", "-o", dir / "out/m_ctx.onnx"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("'" + (dir / "mystery.onnx") +
                               "': 2 nodes no kernel of this engine runs:\n"
                               "  operator ai.example.Mystery (opset 1) is not supported (node "
                               "'odd')\n"
                               "  MatMulNBits node 'q2': attribute 'bits' is 2; 4 and 8 are "
                               "supported"));
  EXPECT_FALSE(std::filesystem::exists(dir / "out/m_ctx.onnx"));
  EXPECT_FALSE(std::filesystem::exists(dir / "out/m_ctx.epctx"));
  CommandResult allowed = RunCli(
      {"compile", dir / "mystery.onnx", "-o", dir / "out/m_ctx.onnx", "--allow-unsupported"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "out/m_ctx.onnx"));
}

// An ONNX operator newer than the onnx library the build reads models with (AffineGrid, opset 20)
// is refused as unsupported, naming the node, also in a control-flow body, where onnx's checker
// called the model invalid ("No Op registered for AffineGrid with domain_version of 20"); the
// opset-18 operators epctx registers (Mish) are not. The import needs the schema, so
// --allow-unsupported cannot write it either.
TEST(CliCompileTest, OperatorUnknownToOnnxIsRefusedAsUnsupported) {
  TempDir dir;
  CommandResult made = tools_testing::RunPython(
      "import onnx\n"
      "from onnx import helper, TensorProto\n"
      "F = TensorProto.FLOAT\n"
      "body = helper.make_graph([helper.make_node('AffineGrid', ['t', 's'], ['b'], "
      "name='inner')],\n"
      "    'body', [], [helper.make_tensor_value_info('b', F, None)])\n"
      "nodes = [helper.make_node('AffineGrid', ['t', 's'], ['y'], name='grid'),\n"
      "         helper.make_node('Mish', ['x'], ['z'], name='mish'),\n"
      "         helper.make_node('If', ['c'], ['w'], name='branch', then_branch=body,\n"
      "                          else_branch=body)]\n"
      "g = helper.make_graph(nodes, 'g', [helper.make_tensor_value_info('t', F, [1, 2, 3]),\n"
      "    helper.make_tensor_value_info('s', TensorProto.INT64, [4]),\n"
      "    helper.make_tensor_value_info('x', F, [2]),\n"
      "    helper.make_tensor_value_info('c', TensorProto.BOOL, [])],\n"
      "    [helper.make_tensor_value_info('y', F, None), helper.make_tensor_value_info('z', F, "
      "[2]),\n"
      "     helper.make_tensor_value_info('w', F, None)])\n"
      "m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 20)])\n"
      "m.ir_version = 8\n"
      "onnx.save(m, 'grid.onnx')\n",
      dir.path());
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string expected =
      "'" + (dir / "grid.onnx") +
      "': 3 nodes no kernel of this engine runs:\n"
      "  operator AffineGrid (opset 20) is not supported (node 'grid'): no kernel runs it, and "
      "the onnx library this build reads models with does not know it either\n"
      "  operator AffineGrid (opset 20) is not supported (node 'inner'): no kernel runs it, and "
      "the onnx library this build reads models with does not know it either\n"
      "  operator AffineGrid (opset 20) is not supported (node 'inner'): no kernel runs it, and "
      "the onnx library this build reads models with does not know it either\n";
  for (bool allow : {false, true}) {
    std::vector<std::string> args = {"compile", dir / "grid.onnx", "-o", dir / "out/g_ctx.onnx"};
    if (allow) args.push_back("--allow-unsupported");
    CommandResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr(expected));
    EXPECT_THAT(r.err, Not(HasSubstr("Mish")));
    EXPECT_FALSE(std::filesystem::exists(dir / "out/g_ctx.onnx"));
  }
}

// com.microsoft Attention and MultiHeadAttention run as the ONNX operators their schemas expand
// them into; where the expansion does not apply, the reason is logged and the node refused like
// any op no kernel runs.
TEST(CliCompileTest, AttentionTheExpansionCannotTakeIsRefusedWithTheReason) {
  TempDir dir;
  CommandResult made = tools_testing::RunPython(
      "import numpy as np, onnx\n"
      "from onnx import helper, numpy_helper, TensorProto\n"
      "w = numpy_helper.from_array(np.zeros((8, 24), np.float32), 'w')\n"
      "b = numpy_helper.from_array(np.zeros(24, np.float32), 'b')\n"
      "def save(name, mask_shape):\n"
      "    node = helper.make_node('Attention', ['x', 'w', 'b', 'm'], ['y'], name='attn',\n"
      "                            domain='com.microsoft', num_heads=2)\n"
      "    # Expanded in the first round, so the refused node is tried again in a second.\n"
      "    other = helper.make_node('Attention', ['x', 'w', 'b'], ['y2'], name='attn_ok',\n"
      "                             domain='com.microsoft', num_heads=2)\n"
      "    g = helper.make_graph([node, other], 'g',\n"
      "        [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 3, 8]),\n"
      "         helper.make_tensor_value_info('m', TensorProto.INT32, mask_shape)],\n"
      "        [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 3, 8]),\n"
      "         helper.make_tensor_value_info('y2', TensorProto.FLOAT, [1, 3, 8])], [w, b])\n"
      "    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17),\n"
      "        helper.make_opsetid('com.microsoft', 1)]), name)\n"
      "save('megatron.onnx', [1, 1, 3, 3])\n"
      "save('raw.onnx', [1, 3])\n"
      "mha = helper.make_node('MultiHeadAttention', ['q', 'kv'], ['y'], name='mha',\n"
      "                       domain='com.microsoft', num_heads=2)\n"
      "g = helper.make_graph([mha], 'g',\n"
      "    [helper.make_tensor_value_info('q', TensorProto.FLOAT, [1, 3, 8]),\n"
      "     helper.make_tensor_value_info('kv', TensorProto.FLOAT, [1, 5, 2, 2, 4])],\n"
      "    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 3, 8])])\n"
      "onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17),\n"
      "    helper.make_opsetid('com.microsoft', 1)]), 'packed_kv.onnx')\n",
      dir.path());
  ASSERT_EQ(made.exit_code, 0) << made.err;
  CommandResult r = RunCli({"compile", dir / "megatron.onnx", "-o", dir / "out/m_ctx.onnx"});
  EXPECT_EQ(r.exit_code, 1);
  // Once, naming the node, though the expansion ran two rounds.
  const std::string refusal =
      "node 'attn': com.microsoft.Attention is not expanded into ONNX operators: a 4-D "
      "(Megatron) mask_index is not supported";
  EXPECT_THAT(r.err, HasSubstr(refusal));
  EXPECT_EQ(r.err.find("not expanded"), r.err.rfind("not expanded")) << r.err;
  EXPECT_THAT(r.err, HasSubstr("operator com.microsoft.Attention (opset 1) is not supported "
                               "(node 'attn')"));
  CommandResult packed = RunCli({"compile", dir / "packed_kv.onnx", "-o", dir / "out/p_ctx.onnx"});
  EXPECT_EQ(packed.exit_code, 1);
  EXPECT_THAT(packed.err,
              HasSubstr("node 'mha': com.microsoft.MultiHeadAttention is not expanded into ONNX "
                        "operators: packed QKV or KV is not supported (key and value must both "
                        "be given)"));
  CommandResult ok = RunCli({"compile", dir / "raw.onnx", "-o", dir / "out/r_ctx.onnx"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_THAT(ok.err, Not(HasSubstr("not expanded")));
}

// Models over 2 GB keep their weights in external data beside them; they compile from any
// working directory (the files are found in the model's folder) and a location that leaves the
// folder is refused.
TEST(CliCompileTest, ExternalDataIsFoundBesideTheModelFromAnyFolder) {
  TempDir dir;
  std::filesystem::create_directories(dir / "models");
  CommandResult made = tools_testing::RunPython(
      "import numpy as np, onnx\n"
      "from onnx import helper, numpy_helper, TensorProto\n"
      "w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), 'W')\n"
      "g = helper.make_graph([helper.make_node('MatMul', ['x', 'W'], ['y'])], 'g',\n"
      "    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 3])],\n"
      "    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 4])], [w])\n"
      "m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])\n"
      "onnx.save(m, 'models/m.onnx', save_as_external_data=True, location='m.onnx.data',\n"
      "          size_threshold=0)\n"
      "np.save('x.npy', np.array([[1, 2, 3]], dtype=np.float32))\n"
      "m.graph.initializer[0].external_data[0].value = '../outside.data'\n"
      "onnx.save(m, 'models/escape.onnx')\n",
      dir.path());
  ASSERT_EQ(made.exit_code, 0) << made.err;
  CommandResult r = RunCli({"compile", dir / "models/m.onnx", "-o", dir / "out/m_ctx.onnx"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CommandResult run = RunCli({"run", dir / "out/m_ctx.onnx", "--input", "x=" + (dir / "x.npy"),
                              "--output-dir", dir / "res", "-C", "epctx.fallback|deny"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  CommandResult made_ref = tools_testing::RunPython(
      "import numpy as np\n"
      "y = np.load('res/y.npy')\n"
      "assert y.tolist() == [[32.0, 38.0, 44.0, 50.0]], y\n",
      dir.path());
  EXPECT_EQ(made_ref.exit_code, 0) << made_ref.err;
  std::filesystem::copy_file(dir / "models/m.onnx.data", dir / "outside.data");
  CommandResult escape =
      RunCli({"compile", dir / "models/escape.onnx", "-o", dir / "out/e_ctx.onnx"});
  EXPECT_EQ(escape.exit_code, 1);
  EXPECT_THAT(escape.err, HasSubstr("external data location '../outside.data' must be a relative "
                                    "path inside the model's directory"));
}

// -f NAME:SIZE fixes a symbolic input dimension (repeatable, as onnxruntime_perf_test's -f): the
// context model declares the fixed shape and `epctx run` refuses another; a name no input has is
// a warning.
TEST(CliCompileTest, FreeDimensionOverridesFixTheDeclaredShapes) {
  TempDir dir;
  CommandResult made = tools_testing::RunPython(
      "import numpy as np, onnx\n"
      "from onnx import helper, numpy_helper, TensorProto\n"
      "w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(3, 2), 'W')\n"
      "g = helper.make_graph([helper.make_node('MatMul', ['x', 'W'], ['y'])], 'g',\n"
      "    [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['batch', 'seq', 3])],\n"
      "    [helper.make_tensor_value_info('y', TensorProto.FLOAT, ['batch', 'seq', 2])], [w])\n"
      "onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]), 'm.onnx')\n"
      "np.save('x4.npy', np.ones((1, 4, 3), np.float32))\n"
      "np.save('x5.npy', np.ones((1, 5, 3), np.float32))\n",
      dir.path());
  ASSERT_EQ(made.exit_code, 0) << made.err;
  CommandResult r = RunCli({"compile", dir / "m.onnx", "-f", "seq:4", "-f", "batch:1", "-f",
                            "beam:2", "-o", dir / "m_ctx.onnx"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("'" + (dir / "m.onnx") +
                               "': free dimension override beam:2 names no dimension of its "
                               "inputs"));
  CommandResult four = RunCli(
      {"run", dir / "m_ctx.onnx", "--input", "x=" + (dir / "x4.npy"), "-C", "epctx.fallback|deny"});
  EXPECT_EQ(four.exit_code, 0) << four.err;
  EXPECT_THAT(four.out, HasSubstr("y: float32 [1,4,2]"));
  CommandResult five = RunCli(
      {"run", dir / "m_ctx.onnx", "--input", "x=" + (dir / "x5.npy"), "-C", "epctx.fallback|deny"});
  EXPECT_EQ(five.exit_code, 1);
  EXPECT_THAT(five.err, HasSubstr("has shape [1,5,3], expected [1,4,3] (dim 1 differs)"));
  CommandResult bad =
      RunCli({"compile", dir / "m.onnx", "-f", "seq:none", "-o", dir / "b_ctx.onnx"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("free dimension override 'seq:none' is not NAME:SIZE"));
  EXPECT_FALSE(std::filesystem::exists(dir / "b_ctx.onnx"));
}

// Every weight is reported before the blob is finished: the last update of each model's stage
// "writing weights" and the "finishing" line count N of N. Without --progress, into a pipe,
// nothing is shown (stderr is not a terminal); -q silences it everywhere.
TEST(CliCompileTest, ProgressShowsStagesAndEveryWeightOnlyWhenAsked) {
  TempDir dir;
  CommandResult r = RunCli({"compile", "-m", Model("resnet18_cls"), "-m", Model("resnet18_reg"),
                            "--output-dir", dir / "out", "--progress", "always"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("epctx: [1/2] resnet18_cls.onnx: importing, "));
  EXPECT_THAT(r.err, HasSubstr("epctx: [1/2] resnet18_cls.onnx: optimizing, "));
  EXPECT_THAT(r.err, HasSubstr("epctx: [2/2] resnet18_reg.onnx: writing weights 0/"));
  std::smatch m;
  const std::regex finishing(R"(\[2/2\] resnet18_reg\.onnx: finishing (\d+)/(\d+), ([0-9.]+) MiB)");
  ASSERT_TRUE(std::regex_search(r.err, m, finishing)) << r.err;
  EXPECT_EQ(m[1].str(), m[2].str());
  EXPECT_GT(std::stoi(m[2].str()), 20);    // ResNet-18's packed filters, at least one per conv
  EXPECT_GT(std::stod(m[3].str()), 40.0);  // both models' weights, shared ones once

  CommandResult piped = RunCli({"compile", Model("resnet18_cls"), "-o", dir / "a_ctx.onnx"});
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_THAT(piped.err, Not(HasSubstr("epctx: resnet18_cls.onnx: ")));
  CommandResult single =
      RunCli({"compile", Model("resnet18_cls"), "-o", dir / "c_ctx.onnx", "--progress", "always"});
  ASSERT_EQ(single.exit_code, 0) << single.err;
  EXPECT_THAT(single.err, HasSubstr("epctx: resnet18_cls.onnx: writing weights 0/"));
  CommandResult quiet = RunCli(
      {"compile", Model("resnet18_cls"), "-o", dir / "b_ctx.onnx", "--progress", "always", "-q"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_THAT(quiet.err, Not(HasSubstr("epctx: resnet18_cls.onnx: ")));
  CommandResult bad = RunCli({"compile", Model("resnet18_cls"), "--progress", "sometimes"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--progress"));
}

}  // namespace
}  // namespace epctx
