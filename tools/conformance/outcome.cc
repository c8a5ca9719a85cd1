#include "conformance/outcome.h"

namespace epctx::cli::conformance {

const char* TestStatusName(TestStatus status) {
  switch (status) {
    case TestStatus::kPassed:
      return "passed";
    case TestStatus::kFailed:
      return "failed";
    case TestStatus::kUnsupported:
      return "unsupported";
  }
  return "failed";
}

std::optional<TestStatus> ParseTestStatus(std::string_view word) {
  for (TestStatus s : {TestStatus::kPassed, TestStatus::kFailed, TestStatus::kUnsupported}) {
    if (word == TestStatusName(s)) return s;
  }
  return std::nullopt;
}

}  // namespace epctx::cli::conformance
