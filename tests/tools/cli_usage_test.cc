// The `epctx` command line itself: help, version, and usage errors (exit status 2). None of these
// needs a model.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tools/tools_test_helpers.h"

namespace epctx {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::StartsWith;
using tools_testing::CommandResult;
using tools_testing::RunCli;
using tools_testing::TempDir;

constexpr int kUsage = 2;

// Subcommand names from the "Subcommands:" section of `epctx --help`.
std::vector<std::string> ListedSubcommands() {
  CommandResult help = RunCli({"--help"});
  std::istringstream lines(help.out);
  std::vector<std::string> names;
  bool in_section = false;
  for (std::string line; std::getline(lines, line);) {
    if (line == "Subcommands:") {
      in_section = true;
    } else if (in_section && line.size() > 2 && line[0] == ' ') {
      std::istringstream words(line);
      std::string name;
      words >> name;
      names.push_back(name);
    } else if (in_section && line.empty()) {
      break;
    }
  }
  return names;
}

TEST(CliUsageTest, HelpForEverySubcommand) {
  CommandResult top = RunCli({"--help"});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  EXPECT_THAT(top.out, HasSubstr("Usage: epctx"));
  std::vector<std::string> names = ListedSubcommands();
  EXPECT_THAT(names, ::testing::IsSupersetOf({"compile", "run"}));
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    for (const char* flag : {"--help", "-h"}) {
      CommandResult help = RunCli({name, flag});
      EXPECT_EQ(help.exit_code, 0) << help.err;
      EXPECT_THAT(help.out, HasSubstr("Usage: epctx " + name));
      EXPECT_THAT(help.err, IsEmpty());
    }
  }
}

TEST(CliUsageTest, RunHelpDocumentsOutputFileNames) {
  CommandResult help = RunCli({"run", "--help"});
  ASSERT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("--output-dir"));
  EXPECT_THAT(help.out, HasSubstr("A-Z a-z 0-9 . _ -"));
  EXPECT_THAT(help.out, HasSubstr("%XX (upper-case hex)"));
  EXPECT_THAT(help.out, HasSubstr("\"%2E\", \"%2E%2E\""));
  EXPECT_THAT(help.out, HasSubstr("--input NAME=FILE"));
  EXPECT_THAT(help.out, HasSubstr("<escaped name>@<i>.npy"));
  EXPECT_THAT(help.out, HasSubstr("An empty optional output writes no file."));
}

TEST(CliUsageTest, CompileHelpNamesTheProgressModes) {
  CommandResult help = RunCli({"compile", "--help"});
  ASSERT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("--progress auto|always|never=auto"));
  EXPECT_THAT(help.out, Not(HasSubstr("->")));
}

TEST(CliUsageTest, Version) {
  CommandResult v = RunCli({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_THAT(v.out, MatchesRegex("epctx [0-9]+\\.[0-9]+\\.[0-9]+\n"));
}

struct UsageCase {
  std::vector<std::string> args;
  std::string message;  // part of CLI11's message on stderr
};

TEST(CliUsageTest, UsageErrorsExitWithTwo) {
  TempDir dir;
  std::string out = dir / "x_ctx.onnx";
  const UsageCase cases[] = {
      {{}, "A subcommand is required"},
      {{"run"}, "model is required"},
      {{"compile"}, "a model is required (MODEL or -m MODEL)"},
      {{"compile", "a.onnx", "b.onnx", "-o", out}, "several models need --output-dir"},
      {{"compile", "-m", "a.onnx", "-m", "b.onnx", "-o", out}, "several models need --output-dir"},
      {{"compile", "-m", "a.onnx", "-m", "b.onnx"}, "several models need --output-dir"},
      {{"compile", "a.onnx", "-o", out, "--output-dir", dir.path().string()}, "excludes"},
      {{"compile", "a.onnx", "-C", "session.intra_op_num_threads=4"},
       "expected KEY|VALUE (key and value separated by '|')"},
      {{"compile", "a.onnx", "-C", "|4"}, "empty key in '|4'"},
      {{"run", "m.onnx", "--input", "x.npy"}, "expected NAME=FILE"},
      {{"run", "m.onnx", "--input", "x="}, "expected NAME=FILE"},
      {{"run", "m.onnx", "-i", "x=a.npy", "b.npy"}, "not expected: b.npy"},
      {{"run", "m.onnx", "--repeat", "0"}, "--repeat"},
      {{"run", "m.onnx", "--repeat", "many"}, "--repeat"},
      {{"run", "m.onnx", "--bogus"}, "--bogus"},
      {{"compile", "--list", "a.onnx"},
       "--list shows what this build compiles for; it takes no model"},
      {{"compile", "a.onnx", "--progress", "sometimes"}, "--progress"},
      {{"frobnicate", "m.onnx"}, ""},
  };
  for (const UsageCase& c : cases) {
    std::string joined;
    for (const std::string& a : c.args) joined += " " + a;
    SCOPED_TRACE("epctx" + joined);
    CommandResult r = RunCli(c.args);
    EXPECT_EQ(r.exit_code, kUsage) << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message));
    EXPECT_THAT(r.err, HasSubstr("--help"));
    EXPECT_THAT(r.out, IsEmpty());
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(CliUsageTest, RuntimeErrorsExitWithOneAndSayWhy) {
  TempDir dir;
  std::string missing = dir / "missing.onnx";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", missing}, std::vector<std::string>{"compile", missing},
        std::vector<std::string>{"run", missing, "-v"},  // -v after the subcommand is accepted
        std::vector<std::string>{"-v", "compile", missing, "--output-dir", dir / "out"}}) {
    CommandResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_THAT(r.err, StartsWith("epctx: error: "));
    EXPECT_THAT(r.err, HasSubstr(missing));
  }
}

}  // namespace
}  // namespace epctx
