#include "loader/profiler.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "util/file.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace epctx::loader {
namespace {

int64_t ThreadId() {
  thread_local const int64_t tid = static_cast<int64_t>(::syscall(SYS_gettid));
  return tid;
}

std::string Quoted(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// ORT's element type names (DataTypeImpl::ToString): ONNX's, with "float" and "double".
std::string OrtTypeName(DataType type) {
  if (type == DataType::kFloat32) return "float";
  if (type == DataType::kFloat64) return "double";
  return DataTypeName(type);
}

// `{"float":[1,3,224,224]}` for each tensor, in an array, as ORT's input_type_shape.
void AppendTypeShape(std::string& out, const Tensor& t) {
  out += "{\"" + OrtTypeName(t.dtype()) + "\":[";
  for (size_t d = 0; d < t.shape().size(); ++d) {
    if (d > 0) out += ',';
    out += std::to_string(t.shape()[d]);
  }
  out += "]}";
}

std::string NodeArgs(const exec::ObservedNode& node, int64_t page_faults) {
  uint64_t activation = 0, parameter = 0, output = 0;
  std::string inputs = "[", outputs = "[";
  for (size_t i = 0; i < node.input_count(); ++i) {
    const Tensor* t = node.input(i);
    if (t == nullptr) continue;
    (node.input_is_weight(i) ? parameter : activation) += t->byte_size();
    if (inputs.size() > 1) inputs += ',';
    AppendTypeShape(inputs, *t);
  }
  for (size_t i = 0; i < node.output_count(); ++i) {
    const Tensor* t = node.output(i);
    if (t == nullptr) continue;
    output += t->byte_size();
    if (outputs.size() > 1) outputs += ',';
    AppendTypeShape(outputs, *t);
  }
  std::string args = fmt::format(
      "{{\"op_name\":{},\"provider\":\"CPUExecutionProvider\",\"kernel\":{},"
      "\"node_index\":\"{}\",\"activation_size\":\"{}\",\"parameter_size\":\"{}\","
      "\"output_size\":\"{}\",\"input_type_shape\":{}],\"output_type_shape\":{}]",
      Quoted(node.op_type()), Quoted(node.kernel().implementation()), node.index(), activation,
      parameter, output, inputs, outputs);
  if (node.depth() > 0) args += fmt::format(",\"graph_depth\":\"{}\"", node.depth());
  return args + fmt::format(",\"page_faults\":\"{}\"}}", page_faults);
}

// Page faults of the whole process so far (minor and major): a node's count is what its threads,
// and any other thread of the process at the same time, faulted while it ran. A first run's
// faults (the arena's, the scratchpads', the weights' pages touched for the first time) are
// much of what it takes longer than later runs.
int64_t PageFaultsSoFar() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return usage.ru_minflt + usage.ru_majflt;
}

// ORT names a node without a name "<op_type>_<index>".
std::string NodeName(const exec::ObservedNode& node) {
  if (!node.name().empty()) return std::string(node.name());
  return fmt::format("{}_{}", node.op_type(), node.index());
}

}  // namespace

Profiler::Profiler(std::string path, Clock::time_point start)
    : path_(std::move(path)), start_(start), pid_(static_cast<int64_t>(::getpid())) {}

int64_t Profiler::MicrosSinceStart(Clock::time_point t) const {
  return std::chrono::duration_cast<std::chrono::microseconds>(t - start_).count();
}

void Profiler::Add(Event event) {
  // Called with mutex_ held.
  if (ended_) return;
  if (events_.size() >= kMaxEvents) {
    if (!dropped_) {
      Logger().warn("profile '{}': more than {} events; later ones are not recorded", path_,
                    kMaxEvents);
    }
    dropped_ = true;
    return;
  }
  events_.push_back(std::move(event));
}

void Profiler::RecordSession(std::string_view name, Clock::time_point start, Args args) {
  Clock::time_point end = Clock::now();
  std::string rendered = "{";
  for (const auto& [key, value] : args) {
    if (rendered.size() > 1) rendered += ',';
    rendered += Quoted(key) + ":" + Quoted(value);
  }
  rendered += "}";
  std::lock_guard<std::mutex> lock(mutex_);
  Add(Event{"Session", std::string(name), MicrosSinceStart(start),
            std::chrono::duration_cast<std::chrono::microseconds>(end - start).count(), ThreadId(),
            std::move(rendered)});
}

void Profiler::BeforeNode(const exec::ObservedNode& node) {
  const int64_t faults = PageFaultsSoFar();
  std::lock_guard<std::mutex> lock(mutex_);
  // No node runs when a main-graph node starts; starts left by a failed run go.
  if (node.depth() == 0) node_starts_.clear();
  node_starts_.push_back({Clock::now(), faults});
}

void Profiler::AfterNode(const exec::ObservedNode& node) {
  Clock::time_point end = Clock::now();
  const int64_t faults = PageFaultsSoFar();
  NodeStart start;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (node_starts_.empty()) return;  // not reached: every AfterNode follows its BeforeNode
    start = node_starts_.back();
    node_starts_.pop_back();
  }
  // Formatted outside the lock, as before page faults were counted.
  std::string args = NodeArgs(node, faults - start.page_faults);
  std::lock_guard<std::mutex> lock(mutex_);
  Add(Event{"Node", NodeName(node) + "_kernel_time", MicrosSinceStart(start.time),
            std::chrono::duration_cast<std::chrono::microseconds>(end - start.time).count(),
            ThreadId(), std::move(args)});
}

Result<std::string> Profiler::End() {
  std::vector<Event> events;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ended_) return std::string();
    ended_ = true;
    events = std::move(events_);
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.ts_us < b.ts_us; });
  std::string out = "[\n";
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    out += fmt::format(
        "{{\"cat\":\"{}\",\"pid\":{},\"tid\":{},\"dur\":{},\"ts\":{},\"ph\":\"X\",\"name\":{},"
        "\"args\":{}}}{}\n",
        e.cat, pid_, e.tid, e.dur_us, e.ts_us, Quoted(e.name), e.args,
        i + 1 < events.size() ? "," : "");
  }
  out += "]\n";
  EPCTX_RETURN_IF_ERROR(
      WriteFileAtomically(path_, std::as_bytes(std::span(out.data(), out.size()))));
  return path_;
}

}  // namespace epctx::loader
