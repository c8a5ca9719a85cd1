// onnxruntime_perf_test's result file (PerformanceResult::DumpToFile) and its statistics lines,
// written the same way so that scripts reading one read the other.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "epctx/status.h"

namespace epctx::cli {

// The model name ORT writes on each line: the name of the folder holding the model file.
std::string ResultModelName(const std::string& model_path);

// "Min Latency: 0.0123 s" ... "P999 Latency: ... s", one per line: ORT's statistics block, with
// its percentile rule (the element at index floor(n * p) of the sorted times).
std::string LatencyStatistics(const std::vector<double>& latency_s);

// Appends one line per run, "model_name,seconds,peak_working_set_bytes,avg_cpu_percent,run",
// and with `statistics` an empty line and LatencyStatistics, to `path` (created if missing,
// appended to as ORT does).
Status AppendResultFile(const std::string& path, const std::string& model_name,
                        const std::vector<double>& latency_s, uint64_t peak_working_set_bytes,
                        int cpu_usage_percent, bool statistics);

}  // namespace epctx::cli
