#include "conformance/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace epctx::cli::conformance {
namespace {

Tally& TallyFor(std::vector<std::pair<std::string, Tally>>& tallies, const std::string& key) {
  for (auto& [name, tally] : tallies) {
    if (name == key) return tally;
  }
  tallies.emplace_back(key, Tally{});
  return tallies.back().second;
}

std::string TallyRow(const std::string& label, const Tally& t) {
  return fmt::format("  {:<30} {:>6} {:>6} {:>11} {:>6} {:>9}\n", label, t.passed, t.failed,
                     t.unsupported, t.total(), t.PassRate());
}

nlohmann::json TallyJson(const Tally& t) {
  return {{"passed", t.passed},
          {"failed", t.failed},
          {"unsupported", t.unsupported},
          {"total", t.total()}};
}

}  // namespace

void Tally::Add(TestStatus status) {
  switch (status) {
    case TestStatus::kPassed:
      ++passed;
      break;
    case TestStatus::kFailed:
      ++failed;
      break;
    case TestStatus::kUnsupported:
      ++unsupported;
      break;
  }
}

std::string Tally::PassRate() const {
  if (total() == 0) return "-";
  return fmt::format("{:.1f}%", 100.0 * passed / total());
}

Tallies CountResults(const std::vector<TestRecord>& records) {
  Tallies t;
  std::vector<Tally> by_family(std::size(kFamilies));
  for (const TestRecord& r : records) {
    TestStatus s = r.outcome.status;
    t.all.Add(s);
    TallyFor(t.suites, r.test.suite).Add(s);
    by_family[static_cast<size_t>(r.classification.family)].Add(s);
    if (r.classification.core) {
      t.core.Add(s);
      TallyFor(t.core_suites, r.test.suite).Add(s);
    }
  }
  for (Family f : kFamilies) {
    const Tally& tally = by_family[static_cast<size_t>(f)];
    if (tally.total() > 0) t.families.emplace_back(f, tally);
  }
  return t;
}

std::string OneLine(const std::string& text, size_t max_chars) {
  std::string line = text;
  std::replace_if(
      line.begin(), line.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
  if (line.size() > max_chars) line = line.substr(0, max_chars) + "...";
  return line;
}

std::string FormatTestLine(const TestRecord& record) {
  std::string line = fmt::format("{}/{} {}", record.test.suite, record.test.name,
                                 TestStatusName(record.outcome.status));
  if (record.outcome.status != TestStatus::kPassed) {
    line += ": " + OneLine(record.outcome.message, 2000);
  }
  return line;
}

std::string FormatSummary(const std::vector<TestRecord>& records, double seconds) {
  Tallies t = CountResults(records);
  std::string out = fmt::format(
      "\nsummary: {} passed, {} failed, {} unsupported of {} tests ({} passed) in {:.1f} s\n",
      t.all.passed, t.all.failed, t.all.unsupported, t.all.total(), t.all.PassRate(), seconds);
  out += fmt::format("  {:<30} {:>6} {:>6} {:>11} {:>6} {:>9}\n", "", "passed", "failed",
                     "unsupported", "total", "pass rate");
  for (const auto& [suite, tally] : t.suites) out += TallyRow("suite " + suite, tally);
  for (const auto& [family, tally] : t.families) out += TallyRow(FamilyName(family), tally);
  out += TallyRow("core subset", t.core);
  for (const auto& [suite, tally] : t.core_suites) out += TallyRow("  of suite " + suite, tally);
  out += fmt::format("core subset: {}.\n", kCoreSubsetDescription);
  return out;
}

std::string FormatJson(const std::vector<TestRecord>& records, double seconds) {
  nlohmann::json tests = nlohmann::json::array();
  for (const TestRecord& r : records) {
    tests.push_back({{"suite", r.test.suite},
                     {"name", r.test.name},
                     {"status", TestStatusName(r.outcome.status)},
                     {"message", r.outcome.message},
                     {"op", r.classification.op},
                     {"op_types", r.info.op_types},
                     {"family", FamilyName(r.classification.family)},
                     {"core", r.classification.core},
                     {"seconds", r.outcome.seconds}});
  }
  Tallies t = CountResults(records);
  nlohmann::json suites = nlohmann::json::object();
  for (const auto& [suite, tally] : t.suites) suites[suite] = TallyJson(tally);
  nlohmann::json families = nlohmann::json::object();
  for (const auto& [family, tally] : t.families) families[FamilyName(family)] = TallyJson(tally);
  nlohmann::json core_suites = nlohmann::json::object();
  for (const auto& [suite, tally] : t.core_suites) core_suites[suite] = TallyJson(tally);
  nlohmann::json doc = {{"tests", tests},
                        {"summary",
                         {{"all", TallyJson(t.all)},
                          {"suites", suites},
                          {"families", families},
                          {"core_subset", TallyJson(t.core)},
                          {"core_subset_suites", core_suites},
                          {"seconds", seconds}}}};
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace epctx::cli::conformance
