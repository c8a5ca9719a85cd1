// `epctx inspect` and `epctx verify`: what they report for a good context model, and what verify
// finds that a load does not look at (a damaged weight, a touched original).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tools/tools_test_helpers.h"

namespace epctx {
namespace {

using ::testing::HasSubstr;
using tools_testing::CommandResult;
using tools_testing::RunCli;
using tools_testing::TempDir;

// MobileNetV2 (it has weights) copied into `dir` and compiled there.
std::string CompileMobileNet(const TempDir& dir) {
  std::filesystem::copy_file(std::string(EPCTX_TEST_MODELS_DIR) + "/mobilenet_v2.onnx",
                             dir / "mobilenet_v2.onnx");
  CommandResult r = RunCli({"compile", dir / "mobilenet_v2.onnx"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return dir / "mobilenet_v2_ctx.onnx";
}

TEST(CliInspectTest, DescribesTheContextModelAndItsBlob) {
  TempDir dir;
  std::string ctx = CompileMobileNet(dir);
  CommandResult r = RunCli({"inspect", ctx});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("context model:  " + ctx + "\n"));
  EXPECT_THAT(r.out, HasSubstr("  blob:         " + (dir / "mobilenet_v2_ctx.epctx") + "\n"));
  EXPECT_THAT(r.out, HasSubstr("  original:     " + (dir / "mobilenet_v2.onnx")));
  EXPECT_THAT(r.out, HasSubstr("  usable here:  yes\n"));
  EXPECT_THAT(r.out, HasSubstr("model 'mobilenet_v2': 1 program,"));
  EXPECT_THAT(r.out, HasSubstr("  program 0 (main) "));

  CommandResult j = RunCli({"inspect", dir / "mobilenet_v2_ctx.epctx", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_FALSE(doc.contains("context_model"));  // a blob was given, not a context model
  const nlohmann::json& blob = doc["blob"];
  EXPECT_EQ(blob["usable_here"], true);
  EXPECT_EQ(blob["file_size"].get<uint64_t>(),
            std::filesystem::file_size(dir / "mobilenet_v2_ctx.epctx"));
  ASSERT_EQ(blob["models"].size(), 1u);
  const nlohmann::json& program = blob["models"][0]["programs"][0];
  size_t ops = 0;
  for (const auto& [op, count] : program["ops"].items()) ops += count.get<size_t>();
  EXPECT_EQ(ops, program["nodes"].get<size_t>());
  EXPECT_GT(blob["weight_count"].get<size_t>(), 50u);
}

// A context model whose blob was replaced by another model's compile: inspect said "usable here:
// yes" from the blob's target alone, while every load of the context model refuses that blob.
TEST(CliInspectTest, ABlobOfAnotherModelIsNotUsable) {
  TempDir dir;
  const std::string ctx = CompileMobileNet(dir);
  const std::string kept = dir / "kept_ctx.onnx";
  std::filesystem::copy_file(ctx, kept);
  std::filesystem::copy_file(tools_testing::OnnxAddTestDir() + "/model.onnx", dir / "add.onnx");
  ASSERT_EQ(RunCli({"compile", "-q", dir / "add.onnx", "-o", ctx}).exit_code, 0);

  CommandResult r = RunCli({"inspect", kept});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string blob = dir / "mobilenet_v2_ctx.epctx";
  EXPECT_THAT(r.out, HasSubstr("  usable here:  no: '" + blob +
                               "': no model named 'mobilenet_v2' (models: "));
  EXPECT_THAT(r.out, HasSubstr("; the blob '" + blob + "' is not the one '" + kept +
                               "' was compiled with (blob checksum "));

  CommandResult j = RunCli({"inspect", "--json", kept});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["blob"]["usable_here"], false);
  EXPECT_EQ(doc["blob"]["target_mismatch"], "");
  EXPECT_THAT(doc["context_model"]["blob_mismatch"].get<std::string>(),
              HasSubstr("no model named 'mobilenet_v2'"));

  CommandResult good = RunCli({"inspect", "--json", ctx});
  ASSERT_EQ(good.exit_code, 0) << good.err;
  EXPECT_EQ(nlohmann::json::parse(good.out)["context_model"]["blob_mismatch"], "");
}

// JSON holds UTF-8 only: a path that is not UTF-8 is written with U+FFFD in place of its bad
// bytes (nlohmann's exception escaped as an "internal error" before, with nothing on stdout).
TEST(CliInspectTest, JsonOfAPathThatIsNotUtf8) {
  TempDir dir;
  const std::string model = dir / "bad\xffname.onnx";
  std::filesystem::copy_file(tools_testing::OnnxAddTestDir() + "/model.onnx", model);
  ASSERT_EQ(RunCli({"compile", "-q", model}).exit_code, 0);
  CommandResult j = RunCli({"inspect", "--json", dir / "bad\xffname_ctx.onnx"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["context_model"]["path"], dir / "bad\xef\xbf\xbdname_ctx.onnx");
}

TEST(CliVerifyTest, PassesAGoodContextModel) {
  TempDir dir;
  std::string ctx = CompileMobileNet(dir);
  CommandResult r = RunCli({"verify", ctx, "--hash-original"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("ok      weight checksums: "));
  EXPECT_THAT(r.out, HasSubstr("ok      kernels: 1 programs, "));
  EXPECT_THAT(r.out, HasSubstr("ok      context model interface: 1 inputs and 1 outputs match "
                               "the blob's model\n"));
  EXPECT_THAT(r.out, HasSubstr("ok      original model: '" + (dir / "mobilenet_v2.onnx") +
                               "' matches the recorded size and mtime and content hash\n"));
  EXPECT_THAT(r.out, HasSubstr("verified: " + ctx + "\n"));
}

TEST(CliVerifyTest, FindsADamagedWeightThatLoadingDoesNotRead) {
  TempDir dir;
  std::string ctx = CompileMobileNet(dir);
  {
    std::fstream blob(dir / "mobilenet_v2_ctx.epctx",
                      std::ios::in | std::ios::out | std::ios::binary);
    blob.seekp(4096 + 1000);
    blob.put('\x5a');
  }
  // Opening the blob as a load does (weights mapped, not read) does not notice...
  CommandResult inspect = RunCli({"inspect", ctx});
  EXPECT_EQ(inspect.exit_code, 0) << inspect.err;
  // ...verify does.
  CommandResult r = RunCli({"verify", ctx});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("FAILED  weight checksums: '" + (dir / "mobilenet_v2_ctx.epctx") +
                               "': WEIGHTS checksum mismatch\n"));
  EXPECT_THAT(r.out, HasSubstr("ok      kernels: "));
  EXPECT_EQ(r.err, "epctx: error: '" + ctx + "': 1 of 8 checks failed\n");
}

TEST(CliVerifyTest, ReportsATouchedOriginal) {
  TempDir dir;
  std::string ctx = CompileMobileNet(dir);
  std::filesystem::last_write_time(
      dir / "mobilenet_v2.onnx",
      std::filesystem::last_write_time(dir / "mobilenet_v2.onnx") + std::chrono::seconds(5));
  CommandResult r = RunCli({"verify", ctx});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("FAILED  original model: '" + (dir / "mobilenet_v2.onnx") +
                               "' changed since it was compiled (modified after compilation): "
                               "loads will fall back to it\n"));
}

// The original's external data files are checked as its model file is: by size and mtime, and
// with --hash-original by content. An original outside the context model's folder is no failure
// (the blob serves; loads cannot fall back to it, as when it is gone).
TEST(CliVerifyTest, ChecksTheOriginalsExternalData) {
  TempDir dir;
  CommandResult made = tools_testing::SaveMatMulWithExternalData(dir.path() / "src");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string outside = dir / "out/m_ctx.onnx";
  ASSERT_EQ(RunCli({"compile", "-q", dir / "src/m.onnx", "-o", outside}).exit_code, 0);
  CommandResult elsewhere = RunCli({"verify", outside});
  EXPECT_EQ(elsewhere.exit_code, 0) << elsewhere.out;
  EXPECT_THAT(elsewhere.out,
              HasSubstr("ok      original model: '" + (dir / "src/m.onnx") +
                        "' with its 1 external data file matches the recorded size and mtime; "
                        "loads cannot fall back to it: the original model '../src/m.onnx' lies "
                        "outside the context model's folder"));

  const std::string ctx = dir / "src/m_ctx.onnx";
  ASSERT_EQ(RunCli({"compile", "-q", dir / "src/m.onnx"}).exit_code, 0);
  CommandResult good = RunCli({"verify", ctx, "--hash-original"});
  EXPECT_EQ(good.exit_code, 0) << good.out;
  EXPECT_THAT(good.out, HasSubstr("ok      original model: '" + (dir / "src/m.onnx") +
                                  "' with its 1 external data file matches the recorded size "
                                  "and mtime and content hash\n"));
  // New bytes, the same size and mtime: only the content hash tells.
  const std::string data = dir / "src/m.onnx.data";
  const auto mtime = std::filesystem::last_write_time(data);
  {
    std::fstream f(data, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4);
    f.put('\x7f');
  }
  std::filesystem::last_write_time(data, mtime);
  EXPECT_EQ(RunCli({"verify", ctx}).exit_code, 0);
  CommandResult hashed = RunCli({"verify", ctx, "--hash-original"});
  EXPECT_EQ(hashed.exit_code, 1);
  EXPECT_THAT(hashed.out, HasSubstr("FAILED  original model: external data '" + data +
                                    "' of the original model has the recorded size and mtime "
                                    "but not the recorded content hash\n"));
  std::filesystem::last_write_time(data, mtime + std::chrono::seconds(5));
  CommandResult touched = RunCli({"verify", ctx});
  EXPECT_EQ(touched.exit_code, 1);
  EXPECT_THAT(touched.out, HasSubstr("FAILED  original model: external data '" + data +
                                     "' of the original model '" + (dir / "src/m.onnx") +
                                     "' changed since it was compiled (modified after "
                                     "compilation): loads will fall back to it\n"));
}

TEST(CliVerifyTest, RefusesAnOriginalModel) {
  TempDir dir;
  CommandResult r = RunCli({"verify", tools_testing::OnnxAddTestDir() + "/model.onnx"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "epctx: error: '" + tools_testing::OnnxAddTestDir() +
                       "/model.onnx' is an original ONNX model (it has no EPContext node); "
                       "compile it with `epctx compile` first\n");
}

}  // namespace
}  // namespace epctx
