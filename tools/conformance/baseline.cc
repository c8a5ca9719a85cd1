#include "conformance/baseline.h"

#include <span>
#include <sstream>

#include "util/file.h"
#include "util/status_macros.h"

namespace epctx::cli::conformance {

Result<Baseline> ReadBaseline(const std::string& path) {
  EPCTX_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  Baseline baseline;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    std::istringstream fields(line);
    std::string test, word, extra;
    fields >> test >> word >> extra;
    std::optional<TestStatus> status = ParseTestStatus(word);
    if (!status.has_value() || !extra.empty()) {
      return EPCTX_ERROR(kCorrupt,
                         "'{}' line {}: expected \"<test> passed|failed|unsupported\", got '{}'",
                         path, number, line);
    }
    if (!baseline.emplace(test, *status).second) {
      return EPCTX_ERROR(kCorrupt, "'{}' line {}: test '{}' is listed twice", path, number, test);
    }
  }
  return baseline;
}

Status WriteBaseline(const std::string& path, const Baseline& baseline,
                     const std::vector<std::string>& comment) {
  std::string text;
  for (const std::string& line : comment) text += "# " + line + "\n";
  for (const auto& [test, status] : baseline) {
    text += test + " " + TestStatusName(status) + "\n";
  }
  return WriteFileAtomically(path, std::as_bytes(std::span(text.data(), text.size())));
}

BaselineDiff DiffBaseline(const Baseline& baseline,
                          const std::map<std::string, TestOutcome>& current, bool complete) {
  BaselineDiff diff;
  for (const auto& [test, outcome] : current) {
    auto it = baseline.find(test);
    std::optional<TestStatus> before;
    if (it != baseline.end()) before = it->second;
    if (before == outcome.status) continue;
    BaselineChange change{test, before, outcome.status, outcome.message};
    if (before == TestStatus::kPassed) {
      diff.regressions.push_back(std::move(change));
    } else if (outcome.status == TestStatus::kPassed) {
      diff.newly_passing.push_back(std::move(change));
    } else {
      diff.other_changes.push_back(std::move(change));
    }
  }
  if (complete) {
    for (const auto& [test, status] : baseline) {
      if (current.count(test)) continue;
      BaselineChange change{test, status, std::nullopt, "not found in this run"};
      if (status == TestStatus::kPassed) {
        diff.regressions.push_back(std::move(change));
      } else {
        diff.other_changes.push_back(std::move(change));
      }
    }
  }
  return diff;
}

Baseline UpdateBaseline(const Baseline& baseline, const std::map<std::string, TestOutcome>& current,
                        bool complete) {
  Baseline updated = complete ? Baseline{} : baseline;
  for (const auto& [test, outcome] : current) updated[test] = outcome.status;
  return updated;
}

}  // namespace epctx::cli::conformance
