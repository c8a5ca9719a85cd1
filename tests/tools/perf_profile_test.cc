// `epctx perf -p FILE`: the timed session's profile in ONNX Runtime's format, its node times
// against its run times (reported, not asserted: timing on a shared machine), and
// bench/plot_profile.py drawing it, and drawing a profile as ONNX Runtime writes it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "epctx/compiler.h"
#include "test_models.h"
#include "tools/tools_test_helpers.h"

namespace epctx {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using tools_testing::CommandResult;
using tools_testing::ReadFileToString;
using tools_testing::RunCli;
using tools_testing::RunProgram;
using tools_testing::TempDir;

const std::string kPlotScript = std::string(EPCTX_SOURCE_DIR) + "/bench/plot_profile.py";

class PerfProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = dir_ / "mobilenet_v2_ctx.onnx";
    auto report = ModelCompiler().CompileToFile(ModelsDir() + "/mobilenet_v2.onnx", ctx_);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
  }
  TempDir dir_;
  std::string ctx_;
};

TEST_F(PerfProfileTest, ProfileHoldsEveryRunNodeByNode) {
  const std::string profile = dir_ / "profile.json";
  CommandResult r =
      RunCli({"perf", "-I", "-r", "5", "--creations", "2", "-p", profile, ctx_, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json out = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(out.is_object()) << r.out;
  EXPECT_EQ(out["profile_file"], profile);

  json events = json::parse(ReadFileToString(profile), nullptr, false);
  ASSERT_TRUE(events.is_array()) << "the profile is not one JSON array";
  std::vector<json> runs, nodes;
  int creations = 0;
  for (const json& e : events) {
    for (const char* key : {"cat", "name", "ph", "ts", "dur", "pid", "tid", "args"}) {
      ASSERT_TRUE(e.contains(key)) << key << " missing in " << e;
    }
    EXPECT_EQ(e["ph"], "X");
    if (e["name"] == "model_run") runs.push_back(e);
    if (e["name"] == "session_initialization") ++creations;
    if (e["cat"] != "Node") continue;
    nodes.push_back(e);
    for (const char* key :
         {"op_name", "provider", "kernel", "input_type_shape", "output_type_shape"}) {
      EXPECT_TRUE(e["args"].contains(key)) << key << " missing in " << e;
    }
  }
  // Only the timed session is profiled: its creation, its first run and the 5 timed runs.
  EXPECT_EQ(creations, 1);
  ASSERT_EQ(runs.size(), 6u);
  ASSERT_EQ(nodes.size() % runs.size(), 0u);

  // Node time against run time, per run; the rest is the executor's own work between nodes
  // (and the profiler's).
  double node_us = 0, run_us = 0;
  for (const json& run : runs) {
    int64_t start = run["ts"], end = start + run["dur"].get<int64_t>();
    size_t inside = 0;
    for (const json& n : nodes) {
      int64_t ts = n["ts"];
      if (ts >= start && ts + n["dur"].get<int64_t>() <= end) {
        node_us += n["dur"].get<double>();
        ++inside;
      }
    }
    EXPECT_EQ(inside, nodes.size() / runs.size()) << "every node of every run lies inside it";
    run_us += run["dur"].get<double>();
  }
  ASSERT_GT(run_us, 0);
  std::printf(
      "[ report ] node durations sum to %.1f%% of model_run time (%zu runs, %.3f ms "
      "per run); the target is within 10%%\n",
      100.0 * node_us / run_us, runs.size(), run_us / 1000.0 / runs.size());

  // bench/plot_profile.py draws it.
  const std::string png = dir_ / "ops.png";
  CommandResult plot = RunProgram("/usr/bin/python3", {kPlotScript, profile, "--out", png});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  EXPECT_THAT(plot.out, HasSubstr("Conv"));
  EXPECT_THAT(plot.out, HasSubstr("(6 run(s))"));
  EXPECT_EQ(ReadFileToString(png).substr(0, 8), "\x89PNG\r\n\x1a\n");
}

TEST_F(PerfProfileTest, ProfileFromConfigOrFlagButNotContradicting) {
  CommandResult r = RunCli(
      {"perf", "-I", ctx_, "-p", dir_ / "a.json", "-C", "epctx.profile_file|" + (dir_ / "b.json")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("contradicts -C epctx.profile_file|"));
  CommandResult c = RunCli({"perf", "-I", "-r", "1", "--creations", "1", ctx_, "-C",
                            "epctx.profile_file|" + (dir_ / "c.json")});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_THAT(c.out, HasSubstr("Profile written to " + (dir_ / "c.json")));
  EXPECT_TRUE(fs::exists(dir_ / "c.json"));
}

// A profile as ONNX Runtime's profiler writes it (core/common/profiler.cc: its spacing, fence
// events, the thread_scheduling_stats object): two runs, MatMul 300 + 500 us, Relu 100 + 100 us.
constexpr const char* kOrtProfile = R"([
{"cat" : "Session","pid" :7,"tid" :7,"dur" :900,"ts" :1,"ph" : "X","name" :"model_loading_uri","args" : {}},
{"cat" : "Session","pid" :7,"tid" :7,"dur" :1000,"ts" :1000,"ph" : "X","name" :"model_run","args" : {}},
{"cat" : "Node","pid" :7,"tid" :7,"dur" :0,"ts" :1010,"ph" : "X","name" :"mm_fence_before","args" : {"op_name" : "MatMul"}},
{"cat" : "Node","pid" :7,"tid" :7,"dur" :300,"ts" :1011,"ph" : "X","name" :"mm_kernel_time","args" : {"op_name" : "MatMul","provider" : "CPUExecutionProvider","node_index" : "0","activation_size" : "64","parameter_size" : "64","output_size" : "64","input_type_shape" : [{"float":[4,4]},{"float":[4,4]}],"output_type_shape" : [{"float":[4,4]}],"thread_scheduling_stats" : {"main_thread": {"thread_pool_name": "session-1-intra-op"}}}},
{"cat" : "Node","pid" :7,"tid" :7,"dur" :100,"ts" :1400,"ph" : "X","name" :"relu_kernel_time","args" : {"op_name" : "Relu","provider" : "CPUExecutionProvider","node_index" : "1","activation_size" : "64","parameter_size" : "0","output_size" : "64","input_type_shape" : [{"float":[4,4]}],"output_type_shape" : [{"float":[4,4]}],"thread_scheduling_stats" : {}}},
{"cat" : "Session","pid" :7,"tid" :7,"dur" :1000,"ts" :3000,"ph" : "X","name" :"model_run","args" : {}},
{"cat" : "Node","pid" :7,"tid" :7,"dur" :500,"ts" :3011,"ph" : "X","name" :"mm_kernel_time","args" : {"op_name" : "MatMul","provider" : "CPUExecutionProvider","node_index" : "0","activation_size" : "64","parameter_size" : "64","output_size" : "64","input_type_shape" : [{"float":[4,4]},{"float":[4,4]}],"output_type_shape" : [{"float":[4,4]}],"thread_scheduling_stats" : {}}},
{"cat" : "Node","pid" :7,"tid" :7,"dur" :100,"ts" :3600,"ph" : "X","name" :"relu_kernel_time","args" : {"op_name" : "Relu","provider" : "CPUExecutionProvider","node_index" : "1","activation_size" : "64","parameter_size" : "0","output_size" : "64","input_type_shape" : [{"float":[4,4]}],"output_type_shape" : [{"float":[4,4]}],"thread_scheduling_stats" : {}}}
]
)";

TEST(PlotProfile, ReadsOnnxRuntimeProfiles) {
  TempDir dir;
  const std::string profile = dir / "ort_profile.json";
  tools_testing::WriteStringToFile(profile, kOrtProfile);
  CommandResult plot = RunProgram("/usr/bin/python3", {kPlotScript, profile});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  // Per run: MatMul (300 + 500) / 2 = 0.4 ms, 80%; Relu 0.1 ms; the fence event is not a node.
  EXPECT_THAT(plot.out, ::testing::ContainsRegex("MatMul +0\\.400 +80\\.0%"));
  EXPECT_THAT(plot.out, ::testing::ContainsRegex("Relu +0\\.100 +20\\.0%"));
  EXPECT_THAT(plot.out, HasSubstr("(2 run(s))"));
  EXPECT_TRUE(fs::exists(dir / "ort_profile.png"));  // the default output name

  CommandResult skip = RunProgram("/usr/bin/python3", {kPlotScript, profile, "--skip-first-run"});
  ASSERT_EQ(skip.exit_code, 0) << skip.err;
  EXPECT_THAT(skip.out, ::testing::ContainsRegex("MatMul +0\\.500 "));
}

}  // namespace
}  // namespace epctx
