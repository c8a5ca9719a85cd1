// `epctx perf --processes P`: P child processes, each creating one session of the model and
// running it once, measured together while all of them are alive.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "epctx/status.h"
#include "perf/memory.h"

namespace epctx::cli {

// Written by the child (`epctx perf --child ...`) as one JSON line on stdout once its session has
// run; the child then waits for its stdin to close before it exits.
struct ChildReport {
  int pid = 0;
  double creation_ms = 0;
  double first_inference_ms = 0;
  MemorySample memory;  // sampled by the parent while every child is alive
};

struct ProcessesReport {
  int count = 0;
  uint64_t rss_sum_bytes = 0;
  uint64_t pss_sum_bytes = 0;
  uint64_t anon_sum_bytes = 0;
  uint64_t blob_mapped_rss_sum_bytes = 0;
  uint64_t blob_mapped_pss_sum_bytes = 0;
  std::vector<ChildReport> children;
};

// Starts `count` copies of this executable with `child_args` (argv after argv[0]), waits until
// each reports, samples each one's memory, then lets them exit.
Result<ProcessesReport> MeasureProcesses(const std::vector<std::string>& child_args, int count,
                                         const BlobFileId& blob);

// The child's side: the line it prints, and the wait for the parent.
void ReportToParent(double creation_ms, double first_inference_ms);
void WaitForParent();

}  // namespace epctx::cli
