// A session's profile (epctx.profile_file) in ONNX Runtime's profiler format: a JSON array of
// Chrome-trace complete events ("ph": "X", microseconds), so trace viewers (chrome://tracing,
// Perfetto) and the scripts people wrote for ORT's profiles read it as they read ORT's.
//
// Events: "Session" events for the steps of session creation (model_loading_uri or
// model_loading_array, model_compile, blob_load, program_binding, session_initialization) and one
// model_run per run; one "Node" event per node per run, named "<node>_kernel_time" with ORT's
// args (op_name, provider, node_index, activation_size, parameter_size, output_size,
// input_type_shape, output_type_shape) plus "kernel" (Kernel::implementation()) and, for nodes of
// control-flow bodies, "graph_depth". ORT's "_fence_before"/"_fence_after" events and its
// "thread_scheduling_stats" arg have no counterpart here and are not written.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "epctx/status.h"
#include "exec/executor.h"

namespace epctx::loader {

class Profiler final : public exec::NodeObserver {
 public:
  using Clock = std::chrono::steady_clock;
  using Args = std::vector<std::pair<std::string, std::string>>;  // string-valued, as ORT's

  // ORT's profiler keeps at most this many events by default; later ones are dropped (with one
  // warning) rather than letting a long run grow memory without bound.
  static constexpr size_t kMaxEvents = 1000 * 1000;

  // Timestamps count from `start` (when the session creation began). Nothing is written before
  // End().
  Profiler(std::string path, Clock::time_point start);
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  const std::string& path() const { return path_; }

  // A "Session" event from `start` to now.
  void RecordSession(std::string_view name, Clock::time_point start, Args args = {});

  void BeforeNode(const exec::ObservedNode& node) override;
  void AfterNode(const exec::ObservedNode& node) override;

  // Writes the events, ordered by start time (as ORT does), to the file (atomically) and stops
  // profiling; returns the path. "" when it already ended.
  Result<std::string> End();

 private:
  struct Event {
    const char* cat;  // "Session" or "Node"
    std::string name;
    int64_t ts_us;
    int64_t dur_us;
    int64_t tid;
    std::string args;  // a rendered JSON object
  };
  void Add(Event event);
  int64_t MicrosSinceStart(Clock::time_point t) const;

  std::string path_;
  Clock::time_point start_;
  int64_t pid_;
  std::mutex mutex_;  // guards everything below
  bool ended_ = false;
  bool dropped_ = false;
  std::vector<Event> events_;
  // Start times of the nodes running now: a control-flow node's body nodes start and end inside
  // it. Runs of one session are serialized, so one stack serves the session.
  struct NodeStart {
    Clock::time_point time;
    int64_t page_faults = 0;
  };
  std::vector<NodeStart> node_starts_;
};

}  // namespace epctx::loader
