#include "perf/report.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "perf/result_file.h"
#include "perf/stats.h"

namespace epctx::cli {
namespace {

double Ms(double seconds) {
  return seconds * 1e3;
}

nlohmann::json MemoryJson(const MemorySample& m) {
  return {{"step", m.step},
          {"rss_bytes", m.rss_bytes},
          {"pss_bytes", m.pss_bytes},
          {"blob_mapped_rss_bytes", m.blob_mapped_rss_bytes},
          {"anon_bytes", m.anon_bytes},
          {"blob_mapped_pss_bytes", m.blob_mapped_pss_bytes},
          {"other_file_rss_bytes", m.other_file_rss_bytes}};
}

Stats Subsequent(const PerfResult& r) {
  return Summarize(std::vector<double>(r.creation_s.begin() + 1, r.creation_s.end()));
}

double Sum(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum;
}

nlohmann::json InputsJson(const PerfResult& r) {
  nlohmann::json out = nlohmann::json::array();
  for (const InputUsed& in : r.inputs) {
    out.push_back({{"name", in.name},
                   {"dtype", in.dtype},
                   {"shape", in.shape},
                   {"source", in.generated ? "generated" : "file"}});
  }
  return out;
}

// The timed runs, as onnxruntime_perf_test reports them, and ours.
void RunsJson(const PerfResult& r, nlohmann::json& j) {
  j["test_mode"] = r.test_mode;
  j["inferences"] = r.latency_s.size();
  j["concurrent_runs"] = r.concurrent;
  j["requests_per_thread"] = r.requests_per_thread;
  if (r.exit_after_creation) {
    j["first_inference_ms"] = nullptr;
    j["latency_ms"] = nullptr;
    return;
  }
  Stats lat = Summarize(r.latency_s);
  j["first_inference_ms"] = Ms(r.first_inference_s);
  j["first_inference_page_faults"] = {{"minor", r.first_inference_minor_faults},
                                      {"major", r.first_inference_major_faults}};
  j["total_inference_time_cost_ms"] = Ms(Sum(r.latency_s));
  j["run_seconds"] = r.run_seconds;
  j["avg_cpu_usage_percent"] = r.cpu_usage_percent;
  j["latency_ms"] = {{"mean", Ms(lat.mean)},
                     {"p50", Ms(lat.Percentile(50))},
                     {"p90", Ms(lat.Percentile(90))},
                     {"p99", Ms(lat.Percentile(99))},
                     {"min", Ms(lat.min)},
                     {"max", Ms(lat.max)}};
}

}  // namespace

void PrintJson(const PerfResult& r) {
  Stats all = Summarize(r.creation_s);
  Stats later = Subsequent(r);
  nlohmann::json j;
  j["model"] = r.model;
  j["notes"] = r.notes;
  j["exit_after_session_creation"] = r.exit_after_creation;
  j["model_from_memory"] = r.from_memory;
  j["context_model_path"] = r.context_model_path;
  j["session_config"] = r.session_config;
  j["inputs"] = InputsJson(r);
  j["load_mode"] = r.load_mode;
  j["load_mode_option"] = r.load_mode_option;
  j["from_context_blob"] = r.from_context_blob;
  j["fallback_reason"] = r.fallback_reason;
  j["blob_path"] = r.blob_path;
  j["sessions"] = r.sessions;
  j["creations"] = r.creation_s.size();
  j["session_creation_ms"] = {
      {"first", Ms(r.creation_s.front())},
      {"subsequent_median",
       r.creation_s.size() > 1 ? nlohmann::json(Ms(later.median)) : nlohmann::json(nullptr)},
      {"min", Ms(all.min)},
      {"max", Ms(all.max)}};
  if (!r.more_sessions_s.empty()) {
    Stats more = Summarize(r.more_sessions_s);
    j["more_sessions_creation_ms"] = {
        {"median", Ms(more.median)}, {"min", Ms(more.min)}, {"max", Ms(more.max)}};
  }
  RunsJson(r, j);
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  j["result_file"] = r.result_file;
  j["profile_file"] = r.profile_file;
  j["memory"] = nlohmann::json::array();
  for (const MemorySample& m : r.memory) j["memory"].push_back(MemoryJson(m));
  if (r.cold) {
    Stats cold_runs = Summarize(r.cold_first_run_s);
    j["cold"] = {{"evictions", r.evictions},
                 {"confirmed", r.cold->confirmed},
                 {"unconfirmed", r.cold->unconfirmed},
                 {"first_inference_ms",
                  {{"median", Ms(cold_runs.median)},
                   {"min", Ms(cold_runs.min)},
                   {"max", Ms(cold_runs.max)}}}};
  }
  if (r.processes) {
    const ProcessesReport& p = *r.processes;
    nlohmann::json children = nlohmann::json::array();
    for (const ChildReport& c : p.children) {
      children.push_back(
          {{"pid", c.pid},
           {"creation_ms", c.creation_ms},
           {"first_inference_ms",
            r.exit_after_creation ? nlohmann::json(nullptr) : nlohmann::json(c.first_inference_ms)},
           {"memory", MemoryJson(c.memory)}});
    }
    j["processes"] = {{"count", p.count},
                      {"rss_sum_bytes", p.rss_sum_bytes},
                      {"pss_sum_bytes", p.pss_sum_bytes},
                      {"anon_sum_bytes", p.anon_sum_bytes},
                      {"blob_mapped_rss_sum_bytes", p.blob_mapped_rss_sum_bytes},
                      {"blob_mapped_pss_sum_bytes", p.blob_mapped_pss_sum_bytes},
                      {"children", children}};
  }
  if (!r.original_creation_s.empty()) {
    Stats orig = Summarize(r.original_creation_s);
    j["original_model"] = r.original_model;
    j["original_session_creation_ms"] = {{"first", Ms(r.original_creation_s.front())},
                                         {"median", Ms(orig.median)}};
  }
  std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

// onnxruntime_perf_test's lines after its timed runs (performance_runner.cc), in its order.
void PrintOrtRunLines(const PerfResult& r) {
  size_t n = r.latency_s.size();
  double total = Sum(r.latency_s);
  std::printf("First inference time cost: %.3f ms\n", Ms(r.first_inference_s));
  std::printf("Total inference time cost: %.6f s\n", total);
  std::printf("Total inference requests: %zu\n", n);
  std::printf("Average inference time cost: %.3f ms\n",
              n > 0 ? Ms(total / static_cast<double>(n)) : 0.0);
  std::printf("Total inference run time: %.6f s\n", r.run_seconds);
  std::printf("Number of inferences per second: %.2f\n",
              r.run_seconds > 0 ? static_cast<double>(n) / r.run_seconds : 0.0);
  std::printf("Avg CPU usage: %d %%\n", r.cpu_usage_percent);
}

void PrintText(const PerfResult& r) {
  Stats later = Subsequent(r);
  for (const std::string& note : r.notes) std::printf("%s\n", note.c_str());
  const bool chosen = r.load_mode_option == "auto" && r.load_mode != "auto";
  std::printf("Model: %s (%s, load mode %s%s%s)\n", r.model.c_str(),
              r.from_context_blob ? "context blob" : "compiled in memory", r.load_mode.c_str(),
              chosen ? (r.load_mode == "mmap" ? " chosen by auto: blob in the page cache"
                                              : " chosen by auto: blob not in the page cache")
                     : "",
              r.from_memory ? ", handed over from memory" : "");
  if (!r.fallback_reason.empty()) {
    std::printf("Context blob not used: %s\n", r.fallback_reason.c_str());
  }
  if (r.cold) {
    std::printf(
        "Cold: the model files were dropped from the page cache before each of %d "
        "creations (no session alive); ",
        r.evictions);
    if (r.cold->confirmed) {
      std::printf("mincore confirmed every drop\n");
    } else {
      std::printf("eviction could NOT be confirmed:\n");
      for (const std::string& line : r.cold->unconfirmed) std::printf("  %s\n", line.c_str());
    }
  }
  std::printf("Session creation time cost: %.6f s\n", r.creation_s.front());
  if (r.creation_s.size() > 1) {
    std::printf("Subsequent session creation (%zu, %s): min %.6f s, median %.6f s, max %.6f s\n",
                r.creation_s.size() - 1,
                r.cold ? "each cold" : "blob already loaded by the first session", later.min,
                later.median, later.max);
  }
  if (!r.exit_after_creation) PrintOrtRunLines(r);
  std::printf("Peak working set size: %llu bytes\n",
              static_cast<unsigned long long>(r.peak_rss_bytes));
  if (r.concurrent > 1) {
    std::string counts;
    for (int c : r.requests_per_thread) counts += (counts.empty() ? "" : ", ") + std::to_string(c);
    std::printf("Concurrent runs: %d threads on one session; requests per thread: %s\n",
                r.concurrent, counts.c_str());
  }
  if (r.statistics && !r.latency_s.empty()) {
    std::printf("%s", LatencyStatistics(r.latency_s).c_str());
  }
  if (r.cold && r.cold_first_run_s.size() > 1) {
    Stats c = Summarize(r.cold_first_run_s);
    std::printf(
        "First inference after each cold creation: min %.3f ms, median %.3f ms, max "
        "%.3f ms\n",
        Ms(c.min), Ms(c.median), Ms(c.max));
  }
  if (!r.more_sessions_s.empty()) {
    Stats more = Summarize(r.more_sessions_s);
    std::printf("Sessions 2..%d created while the first lives: median %.6f s\n", r.sessions,
                more.median);
  }
  std::printf("\nMemory (MiB)        %10s %10s %10s %10s %10s\n", "RSS", "PSS", "blob RSS", "anon",
              "other file");
  for (const MemorySample& m : r.memory) {
    auto mib = [](uint64_t b) { return static_cast<double>(b) / (1 << 20); };
    std::printf("  %-17s %10.1f %10.1f %10.1f %10.1f %10.1f\n", m.step.c_str(), mib(m.rss_bytes),
                mib(m.pss_bytes), mib(m.blob_mapped_rss_bytes), mib(m.anon_bytes),
                mib(m.other_file_rss_bytes));
  }
  if (r.processes) {
    const ProcessesReport& p = *r.processes;
    std::printf(
        "\n%d processes, one session each (parent's sessions released): PSS sum %s, RSS "
        "sum %s, blob PSS sum %s, anon sum %s\n",
        p.count, FormatBytes(p.pss_sum_bytes).c_str(), FormatBytes(p.rss_sum_bytes).c_str(),
        FormatBytes(p.blob_mapped_pss_sum_bytes).c_str(), FormatBytes(p.anon_sum_bytes).c_str());
  }
  if (!r.original_creation_s.empty()) {
    Stats orig = Summarize(r.original_creation_s);
    std::printf(
        "\nSession creation from the original model '%s' (compiled in memory), %zu times: "
        "first %.6f s, median %.6f s\n",
        r.original_model.c_str(), r.original_creation_s.size(), r.original_creation_s.front(),
        orig.median);
    std::printf(
        "Context model vs original: first creation %.1fx faster, median creation %.1fx "
        "faster\n",
        r.original_creation_s.front() / r.creation_s.front(),
        orig.median / (r.creation_s.size() > 1 ? later.median : r.creation_s.front()));
  }
  if (!r.result_file.empty()) std::printf("\nResults appended to %s\n", r.result_file.c_str());
  if (!r.profile_file.empty()) std::printf("Profile written to %s\n", r.profile_file.c_str());
}

}  // namespace epctx::cli
