// How one conformance test ended.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace epctx::cli::conformance {

enum class TestStatus { kPassed, kFailed, kUnsupported };

// "passed", "failed", "unsupported": the words of the output and of baseline files.
const char* TestStatusName(TestStatus status);
std::optional<TestStatus> ParseTestStatus(std::string_view word);

struct TestOutcome {
  TestStatus status = TestStatus::kFailed;
  std::string message;  // why, unless passed
  double seconds = 0;   // wall time, when measured
};

}  // namespace epctx::cli::conformance
