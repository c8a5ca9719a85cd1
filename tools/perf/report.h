// What `epctx perf` measured, and its two renderings: onnxruntime_perf_test-style lines, or one
// JSON object (--json).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "perf/cold.h"
#include "perf/memory.h"
#include "perf/processes.h"

namespace epctx::cli {

// A model input as the runs fed it.
struct InputUsed {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  bool generated = false;  // -I; else read from a file
};

struct PerfResult {
  std::string model;
  std::vector<std::string> notes;    // what the accepted onnxruntime_perf_test flags change here
  bool exit_after_creation = false;  // -n: no run at all
  bool from_memory = false;          // -l
  std::string context_model_path;    // as the session saw it ("" from memory)
  std::map<std::string, std::string> session_config;  // every option the sessions were given
  std::vector<InputUsed> inputs;
  std::string load_mode;         // the mode the blob was loaded in (auto resolved)
  std::string load_mode_option;  // epctx.load_mode as given (auto by default)
  bool from_context_blob = false;
  std::string fallback_reason;
  std::string blob_path;
  int sessions = 1;                     // sessions alive together at the end (--sessions)
  std::vector<double> creation_s;       // the timed creations (--creations), in order
  std::vector<double> more_sessions_s;  // creations of sessions 2..N
  double first_inference_s = 0;         // the first session's first run
  // Page faults of the whole process (every thread: the run's and the preparing ones) while the
  // first run lasted; -1 when not measured.
  int64_t first_inference_minor_faults = -1;
  int64_t first_inference_major_faults = -1;
  std::vector<double> cold_first_run_s;  // --cold: the first run after each cold creation
  std::string test_mode;                 // "times" or "duration"
  double run_seconds = 0;                // wall time of the timed runs
  std::vector<double> latency_s;         // the timed runs, in order of completion
  int concurrent = 1;                    // -c
  std::vector<int> requests_per_thread;  // -c: how the requests fell on the threads
  int cpu_usage_percent = -1;            // as ORT's "Avg CPU usage"; -1 when not measured
  bool statistics = false;               // print ORT's latency statistics (-s)
  std::string result_file;               // written, when given
  std::string profile_file;              // written, when -p
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
