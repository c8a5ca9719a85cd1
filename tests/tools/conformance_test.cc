// `epctx conformance` on a small data directory built from ONNX's test data: tests known to pass,
// a test whose expected output was corrupted, a test of an op nobody implements, baselines,
// JSON and Markdown.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/tools_test_helpers.h"

namespace epctx {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using tools_testing::CommandResult;
using tools_testing::ReadFileToString;
using tools_testing::RunCli;
using tools_testing::TempDir;
using tools_testing::WriteStringToFile;

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

class ConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(node_dir()); }

  fs::path node_dir() const { return dir_.path() / "data" / "node"; }

  // The test `name` of ONNX's node suite, linked into our data directory.
  void Link(const std::string& name) {
    fs::create_directory_symlink(kNodeTests / name, node_dir() / name);
  }

  // A copy of test_add as `name` whose expected output has its last element replaced by 1000.
  void AddBrokenCopy(const std::string& name) {
    fs::copy(kNodeTests / "test_add", node_dir() / name, fs::copy_options::recursive);
    std::string path = (node_dir() / name / "test_data_set_0" / "output_0.pb").string();
    std::string bytes = ReadFileToString(path);
    ASSERT_GT(bytes.size(), 4u);
    const float value = 1000.0f;  // raw_data is the last field: its last 4 bytes are [2,3,4]
    std::memcpy(bytes.data() + bytes.size() - 4, &value, sizeof value);
    WriteStringToFile(path, bytes);
  }

  CommandResult Run(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"conformance", "--data-dir", dir_ / "data", "--suite", "node"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunCli(args);
  }

  TempDir dir_;
};

TEST_F(ConformanceTest, KnownPassingTestsPass) {
  Link("test_add");
  Link("test_relu");
  Link("test_conv_with_strides_padding");
  CommandResult r = Run();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("node/test_add passed\n"));
  EXPECT_THAT(r.out, HasSubstr("node/test_conv_with_strides_padding passed\n"));
  EXPECT_THAT(r.out, HasSubstr("node/test_relu passed\n"));
  EXPECT_THAT(r.out, HasSubstr("summary: 3 passed, 0 failed, 0 unsupported of 3 tests"));
}

TEST_F(ConformanceTest, WrongExpectedOutputFailsNamingTheOutput) {
  AddBrokenCopy("test_add_broken");
  CommandResult r = Run();
  ASSERT_EQ(r.exit_code, 0) << r.err;  // without --baseline, results do not set the exit status
  EXPECT_THAT(r.out, HasSubstr("node/test_add_broken failed: test_data_set_0: output 'sum': 1 of "
                               "60 elements differ beyond atol 1e-07 + rtol 0.001: first at "
                               "[2,3,4]: got "));
  EXPECT_THAT(r.out, HasSubstr(", expected 1000;"));
  EXPECT_THAT(r.out, HasSubstr("summary: 0 passed, 1 failed, 0 unsupported of 1 tests"));
}

TEST_F(ConformanceTest, OpWithoutKernelIsUnsupported) {
  Link("test_bernoulli_seed");
  CommandResult r = Run();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Refused when compiled (the compiler makes every node's kernel once).
  EXPECT_THAT(r.out, HasSubstr("node/test_bernoulli_seed unsupported: compile: "));
  EXPECT_THAT(r.out, HasSubstr("operator RandomUniformLike (opset 15) is not supported"));
  EXPECT_THAT(r.out, HasSubstr("summary: 0 passed, 0 failed, 1 unsupported of 1 tests"));
}

TEST_F(ConformanceTest, FilterSelectsTestsByName) {
  Link("test_add");
  Link("test_relu");
  CommandResult r = Run({"--filter", "relu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("node/test_relu passed\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("test_add")));
}

TEST_F(ConformanceTest, BaselineRegressionFailsAndUpdateRewritesIt) {
  Link("test_relu");
  AddBrokenCopy("test_add_broken");
  std::string baseline = dir_ / "expected.txt";
  WriteStringToFile(baseline, "# recorded\ntest_add_broken passed\ntest_relu unsupported\n");

  CommandResult r = Run({"--baseline", baseline});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 tests passed in the baseline and do not pass now:\n"
                               "  test_add_broken: passed -> failed: test_data_set_0: output "
                               "'sum': "));
  EXPECT_THAT(r.out, HasSubstr("1 tests pass now and did not in the baseline (record them with "
                               "--update-baseline):\n  test_relu: unsupported -> passed\n"));
  EXPECT_THAT(r.err, HasSubstr("1 tests that passed in the baseline no longer pass"));

  r = Run({"--baseline", baseline, "--update-baseline"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string updated = ReadFileToString(baseline);
  EXPECT_THAT(updated, HasSubstr("\ntest_add_broken failed\ntest_relu passed\n"));

  r = Run({"--baseline", baseline});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(baseline + ": no change\n"));
}

TEST_F(ConformanceTest, ExactBaselineAlsoFailsOnUnrecordedImprovements) {
  Link("test_relu");
  std::string baseline = dir_ / "expected.txt";
  WriteStringToFile(baseline, "test_relu unsupported\n");
  CommandResult r = Run({"--baseline", baseline});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;

  r = Run({"--baseline", baseline, "--exact-baseline"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("  test_relu: unsupported -> passed\n"));
  EXPECT_THAT(r.err, HasSubstr("1 tests changed status and the baseline does not record it "
                               "(listed above); record them with --update-baseline"));

  WriteStringToFile(baseline, "test_relu passed\n");
  r = Run({"--baseline", baseline, "--exact-baseline"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;

  r = Run({"--exact-baseline"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("--exact-baseline requires --baseline"));
}

TEST_F(ConformanceTest, BaselineTestThatIsGoneIsARegression) {
  Link("test_relu");
  std::string baseline = dir_ / "expected.txt";
  WriteStringToFile(baseline, "test_relu passed\ntest_gone passed\n");
  CommandResult r = Run({"--baseline", baseline});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("  test_gone: passed -> (gone): not found in this run\n"));

  // With --filter only the tests that ran are compared.
  r = Run({"--baseline", baseline, "--filter", "relu"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(ConformanceTest, MalformedBaselineIsAnError) {
  Link("test_relu");
  std::string baseline = dir_ / "expected.txt";
  WriteStringToFile(baseline, "test_relu fine\n");
  CommandResult r = Run({"--baseline", baseline});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("line 1: expected \"<test> passed|failed|unsupported\""));
}

TEST_F(ConformanceTest, JsonAndMarkdownReports) {
  Link("test_relu");
  Link("test_bernoulli_seed");
  std::string markdown = dir_ / "CONFORMANCE.md";
  CommandResult r = Run({"--json", "--markdown", markdown});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  ASSERT_EQ(doc["tests"].size(), 2u);
  // Sorted by name.
  EXPECT_EQ(doc["tests"][1]["name"], "test_relu");
  EXPECT_EQ(doc["tests"][1]["status"], "passed");
  EXPECT_EQ(doc["tests"][1]["op"], "Relu");
  EXPECT_EQ(doc["tests"][1]["family"], "NN");
  EXPECT_EQ(doc["tests"][1]["core"], true);
  EXPECT_EQ(doc["tests"][0]["status"], "unsupported");
  EXPECT_EQ(doc["tests"][0]["family"], "other");
  EXPECT_EQ(doc["tests"][0]["core"], true);
  EXPECT_EQ(doc["summary"]["all"]["passed"], 1);
  EXPECT_EQ(doc["summary"]["core_subset"]["total"], 2);
  EXPECT_EQ(doc["summary"]["core_subset_suites"]["node"]["passed"], 1);
  EXPECT_EQ(doc["summary"]["core_subset_suites"]["node"]["total"], 2);

  std::string md = ReadFileToString(markdown);
  EXPECT_THAT(md, HasSubstr("| Relu | NN | 1 / 1 |  |\n"));
  EXPECT_THAT(md, HasSubstr("| **core subset** | 1 | 0 | 1 | 2 | 50.0% |\n"
                            "| core subset of suite node | 1 | 0 | 1 | 2 | 50.0% |\n"));
  EXPECT_THAT(md, HasSubstr("## Unsupported: reasons"));
  EXPECT_THAT(md, HasSubstr("test_bernoulli_seed"));
}

}  // namespace
}  // namespace epctx
