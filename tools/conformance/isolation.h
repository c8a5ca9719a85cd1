// Running tasks in forked child processes, so that a crash or a hang ends one test, not the run.
#pragma once

#include <cstddef>
#include <functional>

#include "conformance/outcome.h"
#include "epctx/status.h"

namespace epctx::cli::conformance {

struct IsolationOptions {
  int jobs = 2;                 // children at a time
  double timeout_seconds = 60;  // per child; then it is killed
};

// Runs `task(i)` for every i in [0, count), each in its own forked child, at most `options.jobs`
// at a time. The child sends the outcome back through a pipe and exits; its stdout and stderr are
// captured, and their last line is quoted when it crashes. A child killed by a signal, exiting
// without an outcome or running past the timeout (it is then killed) ends as failed with that
// reason. `done(i, outcome)` runs in this process as each child finishes, with the outcome's
// wall time set. An error means no child could be started (pipe or fork failed).
Status RunIsolated(size_t count, const IsolationOptions& options,
                   const std::function<TestOutcome(size_t)>& task,
                   const std::function<void(size_t, TestOutcome)>& done);

}  // namespace epctx::cli::conformance
