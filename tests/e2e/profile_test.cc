// Profiling through the C++ API (epctx.profile_file, Session::EndProfiling): the file is ONNX
// Runtime's profiler format (a JSON array of Chrome-trace complete events) with one node event
// per node per run, session-creation events, one model_run per run, and the nodes of control-flow
// bodies inside their node.
#include <gtest/gtest.h>
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "e2e/e2e_helpers.h"
#include "epctx/compiler.h"
#include "exec/kernels/onednn/blocked_conv1x1.h"
#include "exec/kernels/onednn/blocked_depthwise_conv.h"

namespace epctx::testing {
namespace {

using nlohmann::json;

json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in, nullptr, /*allow_exceptions=*/false);
}

std::vector<json> Named(const json& events, const std::string& name) {
  std::vector<json> out;
  for (const json& e : events) {
    if (e["name"] == name) out.push_back(e);
  }
  return out;
}

std::vector<json> Nodes(const json& events) {
  std::vector<json> out;
  for (const json& e : events) {
    if (e["cat"] == "Node") out.push_back(e);
  }
  return out;
}

bool Inside(const json& inner, const json& outer) {
  int64_t s = inner["ts"], d = inner["dur"], os = outer["ts"], od = outer["dur"];
  return s >= os && s + d <= os + od;
}

class ProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = dir_ / "mobilenet_v2_ctx.onnx";
    auto report = ModelCompiler().CompileToFile(ModelPath("mobilenet_v2"), ctx_);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    input_ = LoadNpyOrDie(ModelsDir() + "/mobilenet_v2.input.npy");
  }
  TempDir dir_;
  std::string ctx_;
  Tensor input_;
};

TEST_F(ProfileTest, EndProfilingWritesOrtFormat) {
  const std::string path = dir_ / "profile.json";
  SessionOptions options;
  options.AddConfigEntry("epctx.profile_file", path);
  auto session = Session::Create(ctx_, options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  for (int i = 0; i < 2; ++i) ASSERT_TRUE((*session)->Run({{"input", input_}}).ok());
  auto written = (*session)->EndProfiling();
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_EQ(*written, path);
  // Ended: nothing more is recorded or written.
  ASSERT_TRUE((*session)->Run({{"input", input_}}).ok());
  auto again = (*session)->EndProfiling();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, "");

  json events = ReadJson(path);
  ASSERT_TRUE(events.is_array()) << "not one JSON array";
  for (const json& e : events) {
    for (const char* key : {"cat", "name", "ph", "ts", "dur", "pid", "tid", "args"}) {
      ASSERT_TRUE(e.contains(key)) << key << " missing in " << e;
    }
    EXPECT_EQ(e["ph"], "X");
    EXPECT_TRUE(e["ts"].is_number_integer() && e["dur"].is_number_integer()) << e;
    EXPECT_GE(e["ts"].get<int64_t>(), 0) << e;
    EXPECT_TRUE(e["cat"] == "Session" || e["cat"] == "Node") << e;
  }
  for (const char* name :
       {"session_initialization", "model_loading_uri", "blob_load", "program_binding"}) {
    ASSERT_EQ(Named(events, name).size(), 1u) << name;
    EXPECT_EQ(Named(events, name)[0]["cat"], "Session") << name;
  }
  EXPECT_EQ(Named(events, "blob_load")[0]["args"]["blob"], dir_ / "mobilenet_v2_ctx.epctx");
  EXPECT_EQ(Named(events, "blob_load")[0]["args"]["load_mode"], "mmap");
  // The creation steps lie inside session_initialization.
  for (const char* name : {"model_loading_uri", "blob_load", "program_binding"}) {
    EXPECT_TRUE(Inside(Named(events, name)[0], Named(events, "session_initialization")[0])) << name;
  }

  std::vector<json> runs = Named(events, "model_run");
  ASSERT_EQ(runs.size(), 2u);
  // What a first run waits for before its nodes, when it does: inside it, once.
  for (const char* name : {"finish_preparing", "thread_team_start"}) {
    std::vector<json> steps = Named(events, name);
    ASSERT_LE(steps.size(), 1u) << name;
    if (!steps.empty()) {
      EXPECT_TRUE(Inside(steps[0], runs[0])) << name;
    }
  }
  std::vector<json> nodes = Nodes(events);
  ASSERT_FALSE(nodes.empty());
  ASSERT_EQ(nodes.size() % 2, 0u);
  size_t per_run = nodes.size() / 2;
  std::map<std::string, int> seen;
  int own_pointwise = 0;  // DnnlConv nodes run by blocked_conv1x1.h
  int own_depthwise = 0;  // and by blocked_depthwise_conv.h
  int own_average = 0;    // DnnlPool nodes run by blocked_global_average.h
  for (const json& n : nodes) {
    const std::string name = n["name"];
    ASSERT_GT(name.size(), 12u);
    EXPECT_EQ(name.substr(name.size() - 12), "_kernel_time");
    ++seen[name];
    const json& args = n["args"];
    for (const char* key : {"op_name", "provider", "kernel", "node_index", "activation_size",
                            "parameter_size", "output_size", "page_faults"}) {
      ASSERT_TRUE(args.contains(key) && args[key].is_string()) << key << " in " << n;
    }
    // The process's page faults while the node ran: a count, never negative.
    const std::string faults = args["page_faults"];
    EXPECT_TRUE(!faults.empty() && faults.find_first_not_of("0123456789") == std::string::npos)
        << n;
    EXPECT_EQ(args["provider"], "CPUExecutionProvider");
    // Our own kernels say "epctx"; oneDNN's name the code they run ("onednn:jit:avx512_core").
    // The classifier's one row takes our own pass over oneDNN's packed weights where this build
    // reads their layout, the 1x1 and depthwise convolutions our own code on AVX-512, and the
    // average over the whole image our own pass.
    const std::string kernel = args["kernel"];
    if (args["op_name"] == "DnnlMatMul") {
      EXPECT_TRUE(kernel == "epctx:one-row" || kernel.rfind("onednn:", 0) == 0) << n;
    } else if (args["op_name"] == "DnnlConv" && kernel == "epctx:blocked_1x1") {
      ++own_pointwise;
    } else if (args["op_name"] == "DnnlConv" && kernel == "epctx:blocked_dw") {
      ++own_depthwise;
    } else if (args["op_name"] == "DnnlPool" && kernel == "epctx:global-average") {
      ++own_average;
    } else if (args["op_name"] == "DnnlConv" || args["op_name"] == "DnnlPool" ||
               args["op_name"] == "Reorder") {
      EXPECT_EQ(kernel.rfind("onednn:", 0), 0u) << n;
    } else {
      EXPECT_EQ(kernel, "epctx") << n;
    }
    ASSERT_TRUE(args["input_type_shape"].is_array()) << n;
    ASSERT_TRUE(args["output_type_shape"].is_array()) << n;
    EXPECT_FALSE(args.contains("graph_depth")) << "mobilenet_v2 has no control flow";
    // Each node of a run lies inside that run.
    EXPECT_TRUE(Inside(n, runs[0]) || Inside(n, runs[1])) << n;
  }
  // MobileNetV2's 34 1x1 convolutions and its 13 depthwise ones with output rows of 14 pixels
  // or more (of 17), in each of the two runs, where the build has the code.
  EXPECT_EQ(own_pointwise, exec::kernels::onednn::Blocked1x1ConvAvailable() ? 68 : 0);
  EXPECT_EQ(own_depthwise, exec::kernels::onednn::BlockedDepthwiseConvAvailable() ? 26 : 0);
  // Its final average over the 7x7 blocked image, on every build.
  EXPECT_EQ(own_average, 2);
  // One event per node per run.
  EXPECT_EQ(seen.size(), per_run);
  for (const auto& [name, count] : seen) EXPECT_EQ(count, 2) << name;

  // The first node reads the image: its input and parameter shapes as ORT writes them.
  json first = nodes.front();
  EXPECT_EQ(first["args"]["node_index"], "0");
  EXPECT_EQ(first["args"]["input_type_shape"][0], json::parse(R"({"float":[1,3,224,224]})"));
  EXPECT_EQ(first["args"]["activation_size"], std::to_string(1 * 3 * 224 * 224 * 4));
  EXPECT_NE(first["args"]["parameter_size"], "0");  // the filter is a weight
}

TEST_F(ProfileTest, DestructionWritesAProfileNotEnded) {
  const std::string path = dir_ / "at_exit.json";
  SessionOptions options;
  options.AddConfigEntry("epctx.profile_file", path);
  {
    auto session = Session::Create(ctx_, options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    ASSERT_TRUE((*session)->Run({{"input", input_}}).ok());
    EXPECT_FALSE(std::filesystem::exists(path));
  }
  json events = ReadJson(path);
  ASSERT_TRUE(events.is_array());
  EXPECT_EQ(Named(events, "model_run").size(), 1u);
}

TEST_F(ProfileTest, NotProfiledWithoutTheOption) {
  auto session = Session::Create(ctx_);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto ended = (*session)->EndProfiling();
  ASSERT_TRUE(ended.ok());
  EXPECT_EQ(*ended, "");
}

TEST_F(ProfileTest, FromMemoryTheModelIsLoadedFromAnArray) {
  const std::string path = dir_ / "memory.json";
  std::vector<char> bytes = ReadFileBytes(ctx_);
  SessionOptions options;
  options.AddConfigEntry("epctx.profile_file", path);
  options.AddConfigEntry("ep.context_file_path", ctx_);
  auto session = Session::CreateFromMemory(std::as_bytes(std::span<const char>(bytes)), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  ASSERT_TRUE((*session)->EndProfiling().ok());
  json events = ReadJson(path);
  EXPECT_EQ(Named(events, "model_loading_array").size(), 1u);
  EXPECT_EQ(Named(events, "model_loading_uri").size(), 0u);
}

// The body of If: its Add runs inside the If node, one graph deeper.
constexpr const char* kProfiledIfModel = R"(
<ir_version: 8, opset_import: ["" : 16]>
agraph (float[3] x, bool c) => (float[3] y)
<float[3] k = {10.0, 20.0, 30.0}>
{
  y = If(c) <
    then_branch = then_graph () => (float[3] t) { t = Add(x, k) },
    else_branch = else_graph () => (float[3] e) { e = Neg(x) }
  >
}
)";

TEST(ProfileControlFlow, BodyNodesAreProfiledInsideTheirNode) {
  TempDir dir;
  onnx::ModelProto model;
  ASSERT_TRUE(onnx::OnnxParser::Parse(model, kProfiledIfModel).IsOK());
  const std::string path = dir / "if.onnx";
  std::ofstream(path, std::ios::binary) << model.SerializeAsString();
  SessionOptions options;
  options.AddConfigEntry("epctx.profile_file", dir / "if.json");
  auto session = Session::Create(path, options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto x = Tensor::Allocate(DataType::kFloat32, {3});
  auto c = Tensor::Allocate(DataType::kBool, {});
  ASSERT_TRUE(x.ok() && c.ok());
  std::memset(x->mutable_data(), 0, x->byte_size());
  *c->mutable_data_as<bool>() = true;
  ASSERT_TRUE((*session)->Run({{"x", *x}, {"c", *c}}).ok());
  ASSERT_TRUE((*session)->EndProfiling().ok());

  json events = ReadJson(dir / "if.json");
  const json* if_node = nullptr;
  const json* add_node = nullptr;
  const std::vector<json> nodes = Nodes(events);
  for (const json& n : nodes) {
    if (n["args"]["op_name"] == "If") if_node = &n;
    if (n["args"]["op_name"] == "Add") add_node = &n;
    EXPECT_NE(n["args"]["op_name"], "Neg") << "the else branch did not run";
  }
  ASSERT_NE(if_node, nullptr);
  ASSERT_NE(add_node, nullptr);
  EXPECT_FALSE(if_node->at("args").contains("graph_depth"));
  EXPECT_EQ(add_node->at("args")["graph_depth"], "1");
  EXPECT_TRUE(Inside(*add_node, *if_node));
}

}  // namespace
}  // namespace epctx::testing
