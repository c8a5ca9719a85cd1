// Baseline files: the recorded status of every test of a suite, one "<test> <status>" a line,
// sorted by test; '#' starts a comment line. A run is checked against its baseline: a test that
// passed there and does not pass now is a regression.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "conformance/outcome.h"
#include "epctx/status.h"

namespace epctx::cli::conformance {

using Baseline = std::map<std::string, TestStatus>;

Result<Baseline> ReadBaseline(const std::string& path);
// Written atomically, after the `comment` lines (each prefixed with "# ").
Status WriteBaseline(const std::string& path, const Baseline& baseline,
                     const std::vector<std::string>& comment);

struct BaselineChange {
  std::string test;
  std::optional<TestStatus> before;  // absent: not in the baseline
  std::optional<TestStatus> now;     // absent: not found in this run
  std::string message;               // why it does not pass now
};

struct BaselineDiff {
  std::vector<BaselineChange> regressions;    // passed in the baseline, does not pass now
  std::vector<BaselineChange> newly_passing;  // passes now, did not (or was not recorded)
  std::vector<BaselineChange> other_changes;  // any other change of status, new tests included
};

// `current` holds this run's outcomes by test. `complete`: the run covered the whole suite (no
// filter), so a test of the baseline that was not run has gone; one that passed is a regression.
BaselineDiff DiffBaseline(const Baseline& baseline,
                          const std::map<std::string, TestOutcome>& current, bool complete);

// The baseline updated with this run: statuses replaced, new tests added, and with `complete`,
// tests that are gone removed.
Baseline UpdateBaseline(const Baseline& baseline, const std::map<std::string, TestOutcome>& current,
                        bool complete);

}  // namespace epctx::cli::conformance
