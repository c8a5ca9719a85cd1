// `epctx perf` takes onnxruntime_perf_test's command lines: `[options...] model_path
// [result_file]`, each flag with its meaning (or refused with the reason), its output lines and
// its result file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
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
using ::testing::Not;
using tools_testing::CommandResult;
using tools_testing::ReadFileToString;
using tools_testing::RunCli;
using tools_testing::TempDir;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// mobilenet_v2 compiled once, in a folder named "models" (the model name of result files).
class PerfOrtTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    fs::create_directory(dir_->path() / "models");
    ctx_ = new std::string((dir_->path() / "models" / "mobilenet_v2_ctx.onnx").string());
    auto report = ModelCompiler().CompileToFile(ModelsDir() + "/mobilenet_v2.onnx", *ctx_);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
  }
  static void TearDownTestSuite() {
    delete ctx_;
    delete dir_;
  }

  // `epctx perf <args> <ctx> --json`, parsed; one creation unless told otherwise.
  static json PerfJson(std::vector<std::string> args) {
    std::vector<std::string> full = {"perf"};
    full.insert(full.end(), args.begin(), args.end());
    full.insert(full.end(), {*ctx_, "--json"});
    if (std::find(args.begin(), args.end(), "--creations") == args.end()) {
      full.insert(full.end(), {"--creations", "1"});
    }
    CommandResult r = RunCli(full);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(j.is_object()) << "stdout is not one JSON object:\n" << r.out;
    return j;
  }

  static TempDir* dir_;
  static std::string* ctx_;
};
TempDir* PerfOrtTest::dir_ = nullptr;
std::string* PerfOrtTest::ctx_ = nullptr;

// The command line of the EP context guides, with epctx in place of onnxruntime_perf_test.
TEST_F(PerfOrtTest, SeedCommandLineWritesTheResultFile) {
  const std::string result = *dir_ / "result.txt";
  CommandResult r = RunCli(
      {"perf", "-m", "times", "-r", "10", "-e", "cpu", "-I", *ctx_, result, "--creations", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line :
       {"Session creation time cost: ", "First inference time cost: ",
        "Total inference time cost: ", "Total inference requests: 10\n",
        "Average inference time cost: ", "Total inference run time: ",
        "Number of inferences per second: ", "Avg CPU usage: ", "Peak working set size: "}) {
    EXPECT_THAT(r.out, HasSubstr(line));
  }
  // With a result file and no -s, onnxruntime_perf_test prints no statistics.
  EXPECT_THAT(r.out, Not(HasSubstr("P50 Latency")));

  // One line per run: model (the model's folder), seconds, peak working set, CPU %, run index.
  std::vector<std::string> lines = Lines(ReadFileToString(result));
  ASSERT_EQ(lines.size(), 10u) << ReadFileToString(result);
  std::regex row(R"(models,([0-9.e+-]+),([0-9]+),(-?[0-9]+),([0-9]+))");
  std::string peak;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[i], m, row)) << lines[i];
    EXPECT_GT(std::stod(m[1]), 0) << lines[i];
    EXPECT_GT(std::stoll(m[2]), 10 << 20) << "peak working set below 10 MiB: " << lines[i];
    if (i == 0) peak = m[2];
    EXPECT_EQ(m[2], peak) << "one peak working set, measured after the runs, on every line";
    EXPECT_EQ(std::stoul(m[4]), i);
  }
  EXPECT_THAT(r.out, HasSubstr("Peak working set size: " + peak + " bytes\n"));
  fs::remove(result);
}

TEST_F(PerfOrtTest, StatisticsAreAppendedWithS) {
  const std::string result = *dir_ / "stats.txt";
  tools_testing::WriteStringToFile(result, "earlier line\n");
  CommandResult r = RunCli({"perf", "-I", "-r", "4", "-s", *ctx_, result, "--creations", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = Lines(ReadFileToString(result));
  // Appended, as ORT opens the file: the earlier line, 4 runs, an empty line, 7 statistics.
  ASSERT_EQ(lines.size(), 1u + 4u + 1u + 7u) << ReadFileToString(result);
  EXPECT_EQ(lines[0], "earlier line");
  EXPECT_EQ(lines[5], "");
  const char* names[] = {"Min", "Max", "P50", "P90", "P95", "P99", "P999"};
  std::vector<double> values;
  for (int i = 0; i < 7; ++i) {
    std::regex stat(std::string(names[i]) + R"( Latency: ([0-9.e+-]+) s)");
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[6 + i], m, stat)) << lines[6 + i];
    values.push_back(std::stod(m[1]));
    EXPECT_THAT(r.out, HasSubstr(lines[6 + i] + "\n")) << "printed too";
  }
  EXPECT_LE(values[0], values[2]);  // min <= P50
  EXPECT_LE(values[2], values[3]);  // P50 <= P90
  EXPECT_LE(values[6], values[1]);  // P999 <= max
}

TEST_F(PerfOrtTest, WithoutResultFileStatisticsArePrinted) {
  CommandResult r = RunCli({"perf", "-I", "-r", "3", *ctx_, "--creations", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\nMin Latency: "));
  EXPECT_THAT(r.out, HasSubstr("\nP999 Latency: "));
}

TEST_F(PerfOrtTest, ExitAfterCreationRunsNothing) {
  json j = PerfJson({"-n", "-I", "--creations", "3", "--sessions", "2"});
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["exit_after_session_creation"], true);
  EXPECT_EQ(j["creations"], 3);
  EXPECT_EQ(j["inferences"], 0);
  EXPECT_TRUE(j["first_inference_ms"].is_null());
  EXPECT_TRUE(j["latency_ms"].is_null());
  std::vector<std::string> steps;
  for (const json& m : j["memory"]) steps.push_back(m["step"]);
  EXPECT_THAT(steps, ::testing::ElementsAre("start", "session_1_created", "sessions_2_created"));

  const std::string result = *dir_ / "n.txt";
  CommandResult r = RunCli({"perf", "-n", *ctx_, result, "--creations", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Session creation time cost: "));
  EXPECT_THAT(r.out, Not(HasSubstr("First inference")));
  EXPECT_THAT(r.out, HasSubstr("-n: no result file is written"));
  EXPECT_FALSE(fs::exists(result));
}

// -l hands the model over as bytes: the session sees no context model path, and finds the blob
// through ep.context_file_path.
TEST_F(PerfOrtTest, FromMemoryGoesThroughCreateFromMemory) {
  json by_path = PerfJson({"-I", "-r", "1"});
  ASSERT_TRUE(by_path.is_object());
  EXPECT_EQ(by_path["model_from_memory"], false);
  EXPECT_EQ(by_path["context_model_path"], *ctx_);

  json j = PerfJson({"-I", "-r", "1", "-l", "--creations", "2"});
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["model_from_memory"], true);
  EXPECT_EQ(j["context_model_path"], "");
  EXPECT_EQ(j["from_context_blob"], true);
  EXPECT_EQ(j["blob_path"], (fs::path(*ctx_).parent_path() / "mobilenet_v2_ctx.epctx").string());
  EXPECT_THAT(j["notes"].dump(), HasSubstr("Session::CreateFromMemory"));
}

TEST_F(PerfOrtTest, ConcurrentRunsShareTheRequests) {
  json j = PerfJson({"-I", "-r", "6", "-c", "2"});
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["concurrent_runs"], 2);
  EXPECT_EQ(j["inferences"], 6);
  ASSERT_EQ(j["requests_per_thread"].size(), 2u);
  EXPECT_GE(j["requests_per_thread"][0].get<int>(), 1);
  EXPECT_GE(j["requests_per_thread"][1].get<int>(), 1);
  EXPECT_EQ(j["requests_per_thread"][0].get<int>() + j["requests_per_thread"][1].get<int>(), 6);
  // ORT's figures: the requests' summed time and the wall time of all of them.
  EXPECT_GT(j["total_inference_time_cost_ms"].get<double>(), 0);
  EXPECT_GT(j["run_seconds"].get<double>(), 0);

  json d = PerfJson({"-I", "-m", "duration", "-t", "0.2", "-c", "3"});
  ASSERT_TRUE(d.is_object());
  ASSERT_EQ(d["requests_per_thread"].size(), 3u);
  for (const json& n : d["requests_per_thread"]) EXPECT_GE(n.get<int>(), 1);
}

// A model whose input has a free dimension named "batch".
std::string WriteBatchModel(const TempDir& dir) {
  onnx::ModelProto model;
  onnx::Status parsed = onnx::OnnxParser::Parse(model, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[batch, 4] x) => (float[batch, 4] y) { y = Relu(x) }
  )");
  EXPECT_TRUE(parsed.IsOK()) << parsed.ErrorMessage();
  std::string path = dir / "batch.onnx";
  std::ofstream(path, std::ios::binary) << model.SerializeAsString();
  return path;
}

TEST(PerfOrtFlags, FreeDimensionOverrideShapesGeneratedInputs) {
  TempDir dir;
  std::string model = WriteBatchModel(dir);
  auto shape_of = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"perf", model, "-I", "-r", "1", "--creations", "1", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    CommandResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    return std::make_pair(j["inputs"][0]["shape"], j["notes"]);
  };
  EXPECT_EQ(shape_of({}).first, json::parse("[1,4]")) << "free dimensions are 1 by default";
  EXPECT_EQ(shape_of({"-f", "batch:3"}).first, json::parse("[3,4]"));
  auto [shape, notes] = shape_of({"-f", "batch:5 width:2"});  // several in one argument
  EXPECT_EQ(shape, json::parse("[5,4]"));
  EXPECT_THAT(notes.dump(), HasSubstr("-f width: no input of the model has a free dimension"));

  CommandResult bad = RunCli({"perf", model, "-I", "-f", "batch:0"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("-f 'batch:0': expected NAME:VALUE"));
}

TEST_F(PerfOrtTest, OtherProvidersAreRefused) {
  CommandResult cuda = RunCli({"perf", "-e", "cuda", "-I", *ctx_});
  EXPECT_EQ(cuda.exit_code, 1);
  EXPECT_THAT(cuda.err, HasSubstr("-e cuda: epctx runs models only with its own CPU kernels; "
                                  "it has no CUDAExecutionProvider"));
  CommandResult qnn = RunCli({"perf", "-e", "qnn", "-I", *ctx_});
  EXPECT_THAT(qnn.err, HasSubstr("it has no QNNExecutionProvider"));
  CommandResult unknown = RunCli({"perf", "-e", "gpu", "-I", *ctx_});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("-e gpu: not a provider onnxruntime_perf_test knows"));
}

TEST_F(PerfOrtTest, ConfigTakesSeveralEntriesInOneArgument) {
  json j = PerfJson({"-I", "-r", "1", "-C", "epctx.load_mode|read session.intra_op_num_threads|1"});
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["session_config"]["epctx.load_mode"], "read");
  EXPECT_EQ(j["session_config"]["session.intra_op_num_threads"], "1");
  EXPECT_EQ(j["load_mode"], "read");
  // Repeating -C still works.
  json k = PerfJson(
      {"-I", "-r", "1", "-C", "epctx.load_mode|populate", "-C", "session.intra_op_num_threads|1"});
  EXPECT_EQ(k["session_config"]["epctx.load_mode"], "populate");
  EXPECT_EQ(k["session_config"]["session.intra_op_num_threads"], "1");

  CommandResult twice =
      RunCli({"perf", "-I", *ctx_, "-C", "epctx.fallback|deny epctx.fallback|allow"});
  EXPECT_EQ(twice.exit_code, 1);
  EXPECT_THAT(twice.err, HasSubstr("option 'epctx.fallback' is given twice with -C"));
  CommandResult malformed = RunCli({"perf", "-I", *ctx_, "-C", "epctx.fallback|deny nobar"});
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_THAT(malformed.err, HasSubstr("expected KEY|VALUE"));
}

TEST_F(PerfOrtTest, ProviderOptionsAreRefused) {
  CommandResult r = RunCli({"perf", "-I", *ctx_, "-i", "device_id|0 backend_type|htp"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("-i 'device_id|0': provider options configure an execution "
                               "provider, and epctx has only its CPU kernels, for which "
                               "onnxruntime_perf_test reads no -i options either"));
  CommandResult malformed = RunCli({"perf", "-I", *ctx_, "-i", "device_id"});
  EXPECT_THAT(malformed.err, HasSubstr("use a '|' to separate the key and value"));
}

TEST_F(PerfOrtTest, RefusedFlagsSayWhy) {
  CommandResult p = RunCli({"perf", "-I", "-P", *ctx_});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_THAT(p.err, HasSubstr("-P (the parallel executor in onnxruntime_perf_test) is refused: "
                               "epctx runs nodes one at a time"));
  CommandResult f = RunCli({"perf", "-I", "-F", "N:2", *ctx_});
  EXPECT_THAT(f.err, HasSubstr("-F (free dimension override by denotation"));
}

TEST_F(PerfOrtTest, AcceptedFlagsSayWhatTheyChange) {
  json j = PerfJson({"-I", "-r", "1", "-o", "1", "-A", "-M", "-y", "2", "-x", "1", "-S", "3"});
  ASSERT_TRUE(j.is_object());
  std::string notes = j["notes"].dump();
  EXPECT_THAT(notes, HasSubstr("-o 1: changes nothing here: epctx always runs its own compile"));
  EXPECT_THAT(notes, HasSubstr("-A: changes nothing here"));
  EXPECT_THAT(notes, HasSubstr("-M: changes nothing here"));
  EXPECT_THAT(notes, HasSubstr("-y 2: changes nothing here"));
  EXPECT_THAT(notes, HasSubstr("Setting intra_op_num_threads to 1"));
  EXPECT_THAT(notes, Not(HasSubstr("-S")));  // -S seeds the -I inputs
  EXPECT_EQ(j["session_config"]["session.intra_op_num_threads"], "1");

  json none = PerfJson({"-I", "-r", "1", "-o", "120"});  // above 99 means all, as ORT
  EXPECT_EQ(none["notes"].dump(), "[]");
  CommandResult bad = RunCli({"perf", "-I", "-o", "5", *ctx_});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("-o 5: graph optimization levels are 0"));
}

TEST_F(PerfOrtTest, RepeatAndTimeChooseTheModeAsOrtDoes) {
  json j = PerfJson({"-I", "-m", "duration", "-r", "2"});
  EXPECT_EQ(j["test_mode"], "times");
  EXPECT_EQ(j["inferences"], 2);
  json d = PerfJson({"-I", "-t", "0.1"});
  EXPECT_EQ(d["test_mode"], "duration");
}

TEST_F(PerfOrtTest, VerbosePrintsEachRun) {
  CommandResult r = RunCli({"perf", "-v", "-I", "-r", "3", *ctx_, "--creations", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::regex iteration(R"(iteration:([0-9]+),time_cost:[0-9.e+-]+)");
  int count = 0;
  for (const std::string& line : Lines(r.out)) count += std::regex_match(line, iteration);
  EXPECT_EQ(count, 3) << r.out;
}

TEST_F(PerfOrtTest, LongNamesOfTodayStillWork) {
  json j = PerfJson({"--generate-inputs", "--test-mode", "times", "--repeat", "2", "--threads", "1",
                     "--load-mode", "populate", "--sessions", "2"});
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["inferences"], 2);
  EXPECT_EQ(j["load_mode"], "populate");
  EXPECT_EQ(j["sessions"], 2);
  EXPECT_EQ(j["session_config"]["session.intra_op_num_threads"], "1");
}

TEST(PerfOrtHelp, ListsEveryFlag) {
  CommandResult r = RunCli({"perf", "--help"});
  ASSERT_EQ(r.exit_code, 0);
  for (const char* flag :
       {"-m,",         "-r,",        "-t,",         "-e,",    "-I,",         "-x,",
        "-y,",         "-n,",        "-l,",         "-C,",    "-i,",         "-s,",
        "-S,",         "-o,",        "-A,",         "-M,",    "-c,",         "-f,",
        "-p,",         "-F ",        "-P ",         "-T ",    "-u ",         "--input",
        "--creations", "--sessions", "--processes", "--cold", "--load-mode", "--compare-original",
        "--json",      "result_file"}) {
    EXPECT_THAT(r.out, HasSubstr(flag));
  }
  EXPECT_THAT(r.out, Not(HasSubstr("--child")));
}

}  // namespace
}  // namespace epctx
