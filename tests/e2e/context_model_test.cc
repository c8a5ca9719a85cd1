// The context model is a valid ONNX model (onnx.checker), with ONNX Runtime's EPContext attribute
// names, the original's inputs and outputs, and metadata for the fallback.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "e2e/e2e_helpers.h"

namespace epctx::testing {
namespace {

// Runs a Python snippet with the file as argv[1]; returns its stdout and exit status. The
// snippet's file is this process's and this call's own (ctest runs the cases of this file in
// parallel processes, each with its own snippet), and removed afterwards.
std::pair<std::string, int> RunPython(const std::string& code, const std::string& arg) {
  static int calls = 0;
  const std::filesystem::path script =
      std::filesystem::temp_directory_path() /
      ("epctx_ctx_check_" + std::to_string(::getpid()) + "_" + std::to_string(++calls) + ".py");
  { std::ofstream(script) << code; }
  std::string cmd = "/usr/bin/python3 " + script.string() + " '" + arg + "' 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (pipe && fgets(buf, sizeof buf, pipe)) out += buf;
  int status = pipe ? ::pclose(pipe) : -1;
  std::filesystem::remove(script);
  return {out, status};
}

constexpr const char* kDescribe = R"(
import sys, onnx
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m)
n = m.graph.node
assert len(n) == 1, len(n)
node = n[0]
print("op", node.domain, node.op_type)
for a in sorted(node.attribute, key=lambda a: a.name):
    v = onnx.helper.get_attribute_value(a)
    if isinstance(v, bytes):
        v = v.decode() if a.name != "ep_cache_context" or len(v) < 200 else "<%d bytes>" % len(v)
    print("attr", a.name, v)
print("inputs", [(i.name, [d.dim_value for d in i.type.tensor_type.shape.dim]) for i in m.graph.input])
print("outputs", [(o.name, [d.dim_value for d in o.type.tensor_type.shape.dim]) for o in m.graph.output])
print("opsets", sorted((o.domain, o.version) for o in m.opset_import))
print("meta", sorted(p.key for p in m.metadata_props))
)";

TEST(ContextModel, PassesOnnxCheckerAndCarriesOrtAttributes) {
  TempDir dir;
  std::string ctx = dir / "mobilenet_v2_ctx.onnx";
  SessionOptions options;
  options.AddConfigEntry("ep.context_node_name_prefix", "part1_");
  auto report = ModelCompiler(options).CompileToFile(ModelPath("mobilenet_v2"), ctx);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  auto [out, status] = RunPython(kDescribe, ctx);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("op com.microsoft EPContext\n"), std::string::npos) << out;
  EXPECT_NE(out.find("attr embed_mode 0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("attr ep_cache_context mobilenet_v2_ctx.epctx\n"), std::string::npos) << out;
  EXPECT_NE(out.find("attr main_context 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("attr partition_name mobilenet_v2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("attr source epctx\n"), std::string::npos) << out;
  EXPECT_NE(out.find("attr ep_sdk_version "), std::string::npos) << out;
  EXPECT_NE(out.find("attr hardware_architecture x86_64:"), std::string::npos) << out;
  EXPECT_NE(out.find("inputs [('input', [1, 3, 224, 224])]"), std::string::npos) << out;
  EXPECT_NE(out.find("outputs [('output', [1, 1000])]"), std::string::npos) << out;
  EXPECT_NE(out.find("('com.microsoft', 1)"), std::string::npos) << out;
  EXPECT_NE(out.find("meta ['epctx.blob_checksum', 'epctx.original_hash', "
                     "'epctx.original_model', 'epctx.original_mtime_ns', 'epctx.original_size']"),
            std::string::npos)
      << out;
  auto [name_out, name_status] =
      RunPython("import sys, onnx\nprint(onnx.load(sys.argv[1]).graph.node[0].name)\n", ctx);
  EXPECT_EQ(name_out, "part1_mobilenet_v2_ctx\n");
}

TEST(ContextModel, EmbedModeRoundTripGivesIdenticalOutputs) {
  TempDir dir;
  std::string plain = dir / "plain_ctx.onnx";
  std::string embedded = dir / "embedded_ctx.onnx";
  ASSERT_TRUE(ModelCompiler().CompileToFile(ModelPath("mobilenet_v2"), plain).ok());
  SessionOptions options;
  options.AddConfigEntry("ep.context_embed_mode", "1");
  auto report = ModelCompiler(options).CompileToFile(ModelPath("mobilenet_v2"), embedded);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->blob_path, "");
  EXPECT_FALSE(std::filesystem::exists(dir / "embedded_ctx.epctx"));
  EXPECT_GT(std::filesystem::file_size(embedded), report->weight_bytes);

  Tensor input = LoadNpyOrDie(ModelsDir() + "/mobilenet_v2.input.npy");
  auto a = Session::Create(plain);
  auto b = Session::Create(embedded);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE((*b)->origin().from_context_blob);
  auto ra = (*a)->Run({{"input", input}});
  auto rb = (*b)->Run({{"input", input}});
  ASSERT_TRUE(ra.ok() && rb.ok());
  ASSERT_EQ((*ra)[0].byte_size(), (*rb)[0].byte_size());
  EXPECT_EQ(std::memcmp((*ra)[0].data(), (*rb)[0].data(), (*ra)[0].byte_size()), 0);
}

TEST(ContextModel, ContextEnableWritesTheContextModelWhenLoadingTheOriginal) {
  TempDir dir;
  std::string original = CopyModelInto(ModelPath("mobilenet_v2"), dir.path());
  SessionOptions options;
  options.AddConfigEntry("ep.context_enable", "1");
  auto session = Session::Create(original, options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_TRUE(std::filesystem::exists(dir / "mobilenet_v2_ctx.onnx"));
  EXPECT_TRUE(std::filesystem::exists(dir / "mobilenet_v2_ctx.epctx"));
  EXPECT_TRUE((*session)->origin().from_context_blob);
}

TEST(ContextModel, CompileFailureLeavesNothingBehind) {
  TempDir dir;
  std::string bad = dir / "bad.onnx";
  { std::ofstream(bad) << "not a model"; }
  auto report = ModelCompiler().CompileToFile(bad, dir / "bad_ctx.onnx");
  ASSERT_FALSE(report.ok());
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()) ||
              std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 1);
  EXPECT_FALSE(std::filesystem::exists(dir / "bad_ctx.onnx"));
  EXPECT_FALSE(std::filesystem::exists(dir / "bad_ctx.epctx"));
}

}  // namespace
}  // namespace epctx::testing
