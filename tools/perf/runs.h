// The timed runs of `epctx perf`, one after another or from several threads at once (-c), timed
// and reported as onnxruntime_perf_test's PerformanceRunner times them.
#pragma once

#include <cstdio>
#include <vector>

#include "epctx/session.h"
#include "epctx/status.h"
#include "perf/inputs.h"
#include "perf/progress.h"

namespace epctx::cli {

struct RunPlan {
  bool by_time = false;  // -m duration: run until `seconds` have passed; else `repeat` runs
  int repeat = 10;
  double seconds = 10;
  int concurrent = 1;           // -c: threads submitting runs to the one session
  FILE* verbose_out = nullptr;  // -v: one "iteration:N,time_cost:S" line per run, as ORT
};

struct RunTiming {
  std::vector<double> latency_s;  // each request's time, in order of completion
  double wall_s = 0;              // from the first request's start to the last one's end
  std::vector<int> requests_per_thread;
  // As ORT's "Avg CPU usage": the process's CPU time (user + system) over the runs, divided by
  // their wall time and by the cores this process may run on, in percent; -1 if not measurable.
  int cpu_usage_percent = -1;
};

// With `concurrent` = 1 the runs follow one another. With more, that many threads run: in times
// mode they share the `repeat` requests (each thread takes its first request before they start
// together, so each runs at least one when repeat >= concurrent); in duration mode each keeps
// running until the time is up. The first failed run stops them all and is returned.
Result<RunTiming> TimeRuns(Session& session, const Inputs& inputs, const RunPlan& plan,
                           ProgressLine& progress);

}  // namespace epctx::cli
