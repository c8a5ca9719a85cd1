// `epctx conformance [--suite S] [--filter SUBSTR] [--jobs N] [--baseline FILE]
// [--update-baseline] [--markdown FILE] [--json]`: runs ONNX's backend tests through the context
// blob path and reports passed / failed / unsupported per test, suite, family and op.

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "conformance/baseline.h"
#include "conformance/execute.h"
#include "conformance/isolation.h"
#include "conformance/markdown.h"
#include "conformance/report.h"
#include "util/file.h"
#include "util/status_macros.h"

namespace epctx::cli {
namespace {

namespace fs = std::filesystem;
using namespace conformance;  // NOLINT: this file is the conformance command

constexpr const char* kSuitePlaceholder = "{suite}";

struct ConformanceArgs {
  std::string suite = "node";
  std::string filter;
  std::string data_dir = kDefaultDataDir;
  int jobs = 2;
  int threads = 1;
  double timeout = 60;
  std::string baseline;
  bool update_baseline = false;
  bool exact_baseline = false;
  std::string markdown;
  bool json = false;
};

std::vector<std::string> SuitesOf(const ConformanceArgs& args) {
  if (args.suite != "all") return {args.suite};
  return {std::begin(kSuites), std::end(kSuites)};
}

// A fresh directory for the compiled models; removed by the destructor.
class WorkDir {
 public:
  static Result<WorkDir> Create() {
    std::error_code ec;
    fs::path base = fs::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string pattern = (base / "epctx_conformance_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return EPCTX_ERROR(kIoError, "cannot create a directory like '{}'", pattern);
    }
    return WorkDir(pattern);
  }
  WorkDir(WorkDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  WorkDir& operator=(WorkDir&&) = delete;
  ~WorkDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  std::string For(size_t index) const { return path_ + "/" + std::to_string(index); }

 private:
  explicit WorkDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

Result<std::vector<TestRecord>> CollectTests(const ConformanceArgs& args) {
  std::vector<TestCase> tests;
  for (const std::string& suite : SuitesOf(args)) {
    EPCTX_ASSIGN_OR_RETURN(std::vector<TestCase> found,
                           ListTests(args.data_dir, suite, args.filter));
    tests.insert(tests.end(), found.begin(), found.end());
  }
  if (tests.empty()) {
    return EPCTX_ERROR(kNotFound, "no test of suite '{}' under '{}' matches '{}'", args.suite,
                       args.data_dir, args.filter);
  }
  std::vector<TestRecord> records(tests.size());
  std::vector<ModelInfo> infos(tests.size());
  for (size_t i = 0; i < tests.size(); ++i) {
    records[i].test = tests[i];
    auto info = ReadModelInfo(tests[i].model_path());
    if (info.ok()) {
      infos[i] = std::move(*info);
    } else {
      records[i].outcome = {TestStatus::kFailed, "model: " + info.status().message()};
    }
  }
  std::vector<Classification> classes = ClassifyTests(tests, infos);
  for (size_t i = 0; i < tests.size(); ++i) {
    records[i].info = std::move(infos[i]);
    records[i].classification = std::move(classes[i]);
  }
  return records;
}

// Runs every test whose model could be read, each in a child process; prints the test lines in
// test order as they become available (not with --json).
Status RunTests(const ConformanceArgs& args, std::vector<TestRecord>& records) {
  EPCTX_ASSIGN_OR_RETURN(WorkDir work, WorkDir::Create());
  std::vector<size_t> to_run;
  std::vector<bool> ready(records.size(), false);
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].outcome.message.empty()) {
      to_run.push_back(i);
    } else {
      ready[i] = true;  // the model could not be read
    }
  }
  size_t printed = 0;
  auto print_ready = [&] {
    for (; printed < records.size() && ready[printed]; ++printed) {
      if (!args.json) std::printf("%s\n", FormatTestLine(records[printed]).c_str());
    }
    std::fflush(stdout);
  };
  ExecuteOptions options;
  options.threads = args.threads;
  auto task = [&](size_t k) {
    const TestRecord& r = records[to_run[k]];
    std::string dir = work.For(to_run[k]);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return TestOutcome{TestStatus::kFailed, "cannot create '" + dir + "': " + ec.message()};
    return ExecuteTest(r.test, r.info, dir, options);
  };
  auto done = [&](size_t k, TestOutcome outcome) {
    size_t i = to_run[k];
    records[i].outcome = std::move(outcome);
    ready[i] = true;
    std::error_code ec;
    fs::remove_all(work.For(i), ec);
    print_ready();
  };
  IsolationOptions isolation{args.jobs, args.timeout};
  EPCTX_RETURN_IF_ERROR(RunIsolated(to_run.size(), isolation, task, done));
  print_ready();
  return Status::Ok();
}

std::string ChangeLine(const BaselineChange& c) {
  std::string line =
      fmt::format("  {}: {} -> {}", c.test, c.before ? TestStatusName(*c.before) : "(not recorded)",
                  c.now ? TestStatusName(*c.now) : "(gone)");
  if (c.now != TestStatus::kPassed && !c.message.empty()) line += ": " + OneLine(c.message, 500);
  return line + "\n";
}

// What a baseline file says of this run.
struct BaselineCheck {
  size_t regressions = 0;  // passed in the baseline, not now
  size_t unrecorded = 0;   // every other change of status
};

// Checks one baseline file against the tests of `suite` (all tests when `suite` is empty: keys
// are then "<suite>/<test>"), updating it when asked.
Result<BaselineCheck> CheckBaseline(const ConformanceArgs& args, const std::string& path,
                                    const std::string& suite,
                                    const std::vector<TestRecord>& records) {
  std::map<std::string, TestOutcome> current;
  for (const TestRecord& r : records) {
    if (suite.empty()) {
      current[r.test.suite + "/" + r.test.name] = r.outcome;
    } else if (r.test.suite == suite) {
      current[r.test.name] = r.outcome;
    }
  }
  Baseline baseline;
  auto read = ReadBaseline(path);
  if (read.ok()) {
    baseline = std::move(*read);
  } else if (!args.update_baseline || read.status().code() != StatusCode::kNotFound) {
    return read.status();
  }
  bool complete = args.filter.empty();
  BaselineDiff diff = DiffBaseline(baseline, current, complete);
  std::string out;
  if (!diff.regressions.empty()) {
    out += fmt::format("{}: {} tests passed in the baseline and do not pass now:\n", path,
                       diff.regressions.size());
    for (const BaselineChange& c : diff.regressions) out += ChangeLine(c);
  }
  if (!diff.newly_passing.empty()) {
    out += fmt::format("{}: {} tests pass now and did not in the baseline{}:\n", path,
                       diff.newly_passing.size(),
                       args.update_baseline ? "" : " (record them with --update-baseline)");
    for (const BaselineChange& c : diff.newly_passing) out += ChangeLine(c);
  }
  if (!diff.other_changes.empty()) {
    out += fmt::format("{}: {} other changes:\n", path, diff.other_changes.size());
    for (const BaselineChange& c : diff.other_changes) out += ChangeLine(c);
  }
  if (out.empty()) out = fmt::format("{}: no change\n", path);
  std::fputs(out.c_str(), args.json ? stderr : stdout);
  if (args.update_baseline) {
    std::string regenerate =
        fmt::format("regenerate: epctx conformance --suite {} --baseline {} --update-baseline",
                    suite.empty() ? "all" : suite, path);
    EPCTX_RETURN_IF_ERROR(WriteBaseline(
        path, UpdateBaseline(baseline, current, complete),
        {"ONNX backend test statuses of epctx: <test> passed|failed|unsupported", regenerate}));
    std::fprintf(args.json ? stderr : stdout, "%s: updated\n", path.c_str());
  }
  return BaselineCheck{diff.regressions.size(),
                       diff.newly_passing.size() + diff.other_changes.size()};
}

Status CheckBaselines(const ConformanceArgs& args, const std::vector<TestRecord>& records) {
  BaselineCheck total;
  size_t at = args.baseline.find(kSuitePlaceholder);
  if (at == std::string::npos) {
    std::string suite = args.suite == "all" ? "" : args.suite;
    EPCTX_ASSIGN_OR_RETURN(total, CheckBaseline(args, args.baseline, suite, records));
  } else {
    for (const std::string& suite : SuitesOf(args)) {
      std::string path = args.baseline;
      path.replace(at, std::string_view(kSuitePlaceholder).size(), suite);
      EPCTX_ASSIGN_OR_RETURN(BaselineCheck check, CheckBaseline(args, path, suite, records));
      total.regressions += check.regressions;
      total.unrecorded += check.unrecorded;
    }
  }
  if (args.update_baseline) return Status::Ok();
  if (total.regressions > 0) {
    return EPCTX_ERROR(kFailedPrecondition,
                       "{} tests that passed in the baseline no longer pass (listed above)",
                       total.regressions);
  }
  if (args.exact_baseline && total.unrecorded > 0) {
    return EPCTX_ERROR(kFailedPrecondition,
                       "{} tests changed status and the baseline does not record it (listed "
                       "above); record them with --update-baseline",
                       total.unrecorded);
  }
  return Status::Ok();
}

Status RunConformance(const ConformanceArgs& args) {
  auto start = std::chrono::steady_clock::now();
  EPCTX_ASSIGN_OR_RETURN(std::vector<TestRecord> records, CollectTests(args));
  EPCTX_RETURN_IF_ERROR(RunTests(args, records));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (args.json) {
    std::fputs(FormatJson(records, seconds).c_str(), stdout);
  } else {
    std::fputs(FormatSummary(records, seconds).c_str(), stdout);
  }
  if (!args.markdown.empty()) {
    MarkdownSource source{args.suite, args.filter, args.data_dir};
    std::string text = FormatMarkdown(records, source);
    EPCTX_RETURN_IF_ERROR(
        WriteFileAtomically(args.markdown, std::as_bytes(std::span(text.data(), text.size()))));
    std::fprintf(args.json ? stderr : stdout, "wrote %s\n", args.markdown.c_str());
  }
  std::fflush(stdout);
  if (!args.baseline.empty()) return CheckBaselines(args, records);
  return Status::Ok();
}

}  // namespace

Command AddConformanceCommand(CLI::App& parent, const GlobalOptions&) {
  auto args = std::make_shared<ConformanceArgs>();
  CLI::App* app = parent.add_subcommand(
      "conformance",
      "Run ONNX's backend tests: compile each model to a context model + blob, load it with "
      "epctx.fallback=deny, run every data set and compare (rtol 1e-3, atol 1e-7; integers and "
      "bools exactly)");
  std::vector<std::string> suites = {std::begin(kSuites), std::end(kSuites)};
  suites.push_back("all");
  app->add_option("--suite", args->suite, "Which suite of the test data")
      ->check(CLI::IsMember(suites))
      ->default_val("node");
  app->add_option("--filter", args->filter, "Only tests whose name contains SUBSTR")
      ->type_name("SUBSTR");
  app->add_option("--data-dir", args->data_dir,
                  "The test data: a directory of suites (<suite>/<test>/model.onnx)")
      ->type_name("DIR")
      ->default_val(kDefaultDataDir);
  app->add_option("-j,--jobs", args->jobs, "Tests run at a time, each in its own process")
      ->type_name("N")
      ->check(CLI::Range(1, 256))
      ->default_val(2);
  app->add_option("--threads", args->threads, "session.intra_op_num_threads of each test")
      ->type_name("N")
      ->check(CLI::Range(0, 256))
      ->default_val(1);
  app->add_option("--timeout", args->timeout, "Seconds a test may take before it is killed")
      ->type_name("SECONDS")
      ->check(CLI::PositiveNumber)
      ->default_val(60);
  CLI::Option* baseline =
      app->add_option(
             "--baseline", args->baseline,
             "Compare with the statuses recorded in FILE (\"<test> <status>\" lines); exit "
             "non-zero when a test that passed there does not pass now. \"{suite}\" in FILE "
             "stands for each suite run, one file per suite")
          ->type_name("FILE");
  app->add_flag("--update-baseline", args->update_baseline,
                "Write this run's statuses to the --baseline file(s)")
      ->needs(baseline);
  app->add_flag("--exact-baseline", args->exact_baseline,
                "Also exit non-zero when a test's status differs from the --baseline in any "
                "other way (now passing, or between failed and unsupported), so that a change "
                "records its new statuses in the same commit")
      ->needs(baseline);
  app->add_option("--markdown", args->markdown,
                  "Write the conformance table (per op, family, unsupported reasons) to FILE")
      ->type_name("FILE");
  app->add_flag("--json", args->json,
                "Print the results as one JSON document instead of the test lines and summary");
  app->footer(
      "Each test runs in a forked child process; a crash or timeout fails that test only.\n"
      "A test is unsupported when compiling, loading or running it fails with an Unsupported\n"
      "error (an op, attribute or type the engine does not implement). Without --baseline the\n"
      "exit status is 0 whatever the results.");
  return Command{app, [args]() { return RunConformance(*args); }};
}

}  // namespace epctx::cli
