// docs/CONFORMANCE.md: the conformance run as Markdown tables (overall, per family, per op,
// unsupported reasons grouped, failures).
#pragma once

#include <string>
#include <vector>

#include "conformance/report.h"

namespace epctx::cli::conformance {

// The command that regenerates docs/CONFORMANCE.md and the baselines, quoted in the document.
inline constexpr const char* kRegenerateCommand =
    "build/bin/epctx conformance --suite all --baseline 'tests/conformance/expected_{suite}.txt' "
    "--update-baseline --markdown docs/CONFORMANCE.md";

struct MarkdownSource {
  std::string suite;   // as given to --suite
  std::string filter;  // as given to --filter
  std::string data_dir;
};

std::string FormatMarkdown(const std::vector<TestRecord>& records, const MarkdownSource& source);

// The message of a test that did not pass, without the test's own paths.
std::string ShortReason(const TestRecord& record);
// ShortReason() also without the names of the test's nodes and values and the wrapper of load
// errors, so that equal reasons of different tests group together.
std::string GeneralReason(const TestRecord& record);

}  // namespace epctx::cli::conformance
