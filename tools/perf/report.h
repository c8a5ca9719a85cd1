// What `epctx perf` measured, and its two renderings: onnxruntime_perf_test-style lines, or one
// JSON object (--json).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "perf/cold.h"
#include "perf/memory.h"
#include "perf/processes.h"

namespace epctx::cli {

struct PerfResult {
  std::string model;
  std::string load_mode;
  bool from_context_blob = false;
  std::string fallback_reason;
  std::string blob_path;
  int sessions = 1;                      // sessions alive together at the end (--sessions)
  std::vector<double> creation_s;        // the timed creations (--creations), in order
  std::vector<double> more_sessions_s;   // creations of sessions 2..N
  double first_inference_s = 0;          // the first session's first run
  std::vector<double> cold_first_run_s;  // --cold: the first run after each cold creation
  std::string test_mode;                 // "times" or "duration"
  double run_seconds = 0;                // wall time of the timed runs
  std::vector<double> latency_s;         // the timed runs
  uint64_t peak_rss_bytes = 0;
  std::vector<MemorySample> memory;
  std::optional<EvictionReport> cold;  // --cold: merged over every eviction
  int evictions = 0;
  std::optional<ProcessesReport> processes;
  std::string original_model;  // --compare-original
  std::vector<double> original_creation_s;
};

void PrintJson(const PerfResult& r);
void PrintText(const PerfResult& r);

}  // namespace epctx::cli
