// The results of a conformance run and their reports: one line per test, the summary, JSON.
// (The Markdown table is in conformance/markdown.h.)
#pragma once

#include <string>
#include <vector>

#include "conformance/classify.h"
#include "conformance/model_info.h"
#include "conformance/outcome.h"
#include "conformance/suite.h"

namespace epctx::cli::conformance {

struct TestRecord {
  TestCase test;
  ModelInfo info;
  Classification classification;
  TestOutcome outcome;
};

struct Tally {
  int passed = 0;
  int failed = 0;
  int unsupported = 0;

  void Add(TestStatus status);
  int total() const { return passed + failed + unsupported; }
  // "93.1%"; "-" when there are no tests.
  std::string PassRate() const;
};

// The run's tallies: overall, by suite, by family, and of the core subset.
struct Tallies {
  Tally all;
  Tally core;  // Classification::core: only float32/int32/int64/bool, no training, no sequences
  std::vector<std::pair<std::string, Tally>> core_suites;  // the core subset of each suite
  std::vector<std::pair<std::string, Tally>> suites;       // in order of first appearance
  std::vector<std::pair<Family, Tally>> families;  // every family that has tests, kFamilies order
};
Tallies CountResults(const std::vector<TestRecord>& records);

// What the core subset is, in words.
inline constexpr const char* kCoreSubsetDescription =
    "tests whose inputs, outputs and initializers are all float32, int32, int64 or bool tensors, "
    "excluding training ops and sequence/optional/string values";

// "node/test_add passed", "node/test_x failed: <why>".
std::string FormatTestLine(const TestRecord& record);
// The summary printed after the test lines.
std::string FormatSummary(const std::vector<TestRecord>& records, double seconds);
// The whole run as one JSON document: tests (suite, name, status, message, op, family, core,
// seconds) and the summary.
std::string FormatJson(const std::vector<TestRecord>& records, double seconds);

// One line of text: newlines and tabs become spaces, and it is cut at `max_chars`.
std::string OneLine(const std::string& text, size_t max_chars);

}  // namespace epctx::cli::conformance
