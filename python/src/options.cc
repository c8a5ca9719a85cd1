// epctx.SessionOptions: onnxruntime's SessionOptions names over epctx::SessionOptions. Entries
// are checked when added, so a wrong key fails at the line that sets it.
#include <charconv>

#include "bindings.h"

namespace epctx::python {
namespace {

constexpr const char* kThreadsKey = "session.intra_op_num_threads";

// onnxruntime's values (GraphOptimizationLevel and ExecutionMode in its C API).
enum class GraphOptimizationLevel {
  kDisableAll = 0,
  kEnableBasic = 1,
  kEnableExtended = 2,
  kEnableLayout = 3,
  kEnableAll = 99
};
enum class ExecutionMode { kSequential = 0, kParallel = 1 };

// onnxruntime's SessionOptions attributes that are not config entries. Profiling is epctx's own
// profiler: the package names its file when a session is created (epctx.profile_file). The rest
// are taken so that scripts written for onnxruntime run, and change nothing, as `epctx perf`'s
// -o, -y, -A and -M: the compile passes always run, nodes run one at a time, and the activation
// arena and memory plan are compiled in. ORT_PARALLEL is refused, as perf's -P.
struct PythonSessionOptions : SessionOptions {
  bool enable_profiling = false;
  std::string profile_file_prefix = "epctx_profile";
  GraphOptimizationLevel graph_optimization_level = GraphOptimizationLevel::kEnableAll;
  ExecutionMode execution_mode = ExecutionMode::kSequential;
  int inter_op_num_threads = 0;
  bool enable_cpu_mem_arena = true;
  bool enable_mem_pattern = true;
};

void AddEntry(SessionOptions& options, const std::string& key, const std::string& value) {
  Status valid = CheckConfigEntry(key, value);
  if (!valid.ok()) ThrowStatus(valid);
  options.AddConfigEntry(key, value);
}

// ONNX Runtime's SessionOptions.add_free_dimension_override_by_name: one more NAME:SIZE in the
// epctx.free_dimension_overrides entry (checked as the entry is set).
void AddFreeDimensionOverride(SessionOptions& options, const std::string& name, int64_t size) {
  if (name.empty() || name.find(',') != std::string::npos) {
    ThrowStatus(Status(StatusCode::kInvalidArgument,
                       "free dimension name '" + name + "' must be non-empty and hold no ','"));
  }
  const std::string key = "epctx.free_dimension_overrides";
  const std::string item = name + ":" + std::to_string(size);
  const std::string before = options.GetConfigEntry(key).value_or("");
  AddEntry(options, key, before.empty() ? item : before + "," + item);
}

int Threads(const SessionOptions& options) {
  std::string v = options.GetConfigEntry(kThreadsKey).value_or("0");
  int n = 0;
  std::from_chars(v.data(), v.data() + v.size(), n);  // checked when it was added
  return n;
}

void SetExecutionMode(PythonSessionOptions& options, ExecutionMode mode) {
  if (mode == ExecutionMode::kParallel) {
    ThrowStatus(Status(StatusCode::kUnsupported,
                       "execution_mode ORT_PARALLEL is not supported: epctx runs nodes one at a "
                       "time in program order, its kernels on intra_op_num_threads threads"));
  }
  options.execution_mode = mode;
}

void SetInterOpThreads(PythonSessionOptions& options, int n) {
  if (n < 0) ThrowInvalid("inter_op_num_threads must be >= 0, got " + std::to_string(n));
  options.inter_op_num_threads = n;
}

// onnxruntime attributes epctx cannot honour: reading or setting one raises Unsupported saying
// what to use instead, rather than Python's bare AttributeError.
void AddRefusedAttribute(py::class_<PythonSessionOptions, SessionOptions>& cls, const char* name,
                         const std::string& instead) {
  const std::string message =
      std::string("SessionOptions.") + name + " is not supported: " + instead;
  auto refuse = [message](const PythonSessionOptions&) -> py::object {
    ThrowStatus(Status(StatusCode::kUnsupported, message));
  };
  cls.def_property(
      name, refuse,
      [message](PythonSessionOptions&, const py::object&) {
        ThrowStatus(Status(StatusCode::kUnsupported, message));
      },
      message.c_str());
}

std::string Repr(const PythonSessionOptions& options) {
  std::string out = "SessionOptions(";
  bool first = true;
  auto add = [&](const std::string& item) {
    out += (first ? "" : ", ") + item;
    first = false;
  };
  for (const auto& [key, value] : options.config_entries()) add(key + "=" + value);
  if (options.enable_profiling) add("enable_profiling=True");
  if (options.profile_file_prefix != PythonSessionOptions().profile_file_prefix) {
    add("profile_file_prefix=" + options.profile_file_prefix);
  }
  return out + ")";
}

}  // namespace

void RegisterOptions(py::module_& m) {
  py::enum_<GraphOptimizationLevel>(m, "GraphOptimizationLevel")
      .value("ORT_DISABLE_ALL", GraphOptimizationLevel::kDisableAll)
      .value("ORT_ENABLE_BASIC", GraphOptimizationLevel::kEnableBasic)
      .value("ORT_ENABLE_EXTENDED", GraphOptimizationLevel::kEnableExtended)
      .value("ORT_ENABLE_LAYOUT", GraphOptimizationLevel::kEnableLayout)
      .value("ORT_ENABLE_ALL", GraphOptimizationLevel::kEnableAll);
  py::enum_<ExecutionMode>(m, "ExecutionMode")
      .value("ORT_SEQUENTIAL", ExecutionMode::kSequential)
      .value("ORT_PARALLEL", ExecutionMode::kParallel);

  // The engine's options, as the functions that take them see them (no constructor of its own).
  py::class_<SessionOptions>(m, "_EngineSessionOptions");
  py::class_<PythonSessionOptions, SessionOptions> cls(
      m, "SessionOptions",
      "Options of sessions and compiles, as string key/value entries with ONNX Runtime's key "
      "names where one exists (README: Options), and onnxruntime's attributes (docs/API.md).");
  cls.def(py::init<>())
      .def("add_session_config_entry", &AddEntry, py::arg("config_key"), py::arg("config_value"),
           "Sets an entry; an unknown key or a bad value raises epctx.InvalidArgument naming the "
           "known keys or the accepted values.")
      .def("add_free_dimension_override_by_name", &AddFreeDimensionOverride, py::arg("dim_name"),
           py::arg("dim_value"),
           "Fixes the inputs' symbolic dimension `dim_name` to `dim_value` (>= 1) when a model is "
           "compiled with these options (epctx.free_dimension_overrides): the session then has "
           "fixed shapes and refuses inputs of other sizes. A context model compiled before keeps "
           "the shapes it was compiled with.")
      .def(
          "get_session_config_entry",
          [](const SessionOptions& options, const std::string& key) {
            auto value = options.GetConfigEntry(key);
            if (!value) {
              ThrowStatus(
                  Status(StatusCode::kNotFound, "no session config entry '" + key + "' is set"));
            }
            return *value;
          },
          py::arg("config_key"), "The entry's value; epctx.NotFound when it is not set.")
      .def_property(
          "intra_op_num_threads", &Threads,
          [](SessionOptions& options, int n) { AddEntry(options, kThreadsKey, std::to_string(n)); },
          "Kernel threads of a session (session.intra_op_num_threads); 0 = all cores.")
      .def_readwrite("enable_profiling", &PythonSessionOptions::enable_profiling,
                     "Profile each session node by node into PREFIX_YYYY-MM-DD_HH-MM-SS.json "
                     "(InferenceSession.end_profiling() writes it and returns its path), unless "
                     "the entry epctx.profile_file names the file.")
      .def_readwrite("profile_file_prefix", &PythonSessionOptions::profile_file_prefix,
                     "The profile file's name up to its date (default 'epctx_profile').")
      .def_readwrite("graph_optimization_level", &PythonSessionOptions::graph_optimization_level,
                     "Accepted and changes nothing: epctx compiles every model with all its "
                     "passes.")
      .def_property(
          "execution_mode",
          [](const PythonSessionOptions& options) { return options.execution_mode; },
          &SetExecutionMode, "ORT_SEQUENTIAL, what epctx does; ORT_PARALLEL is refused.")
      .def_property(
          "inter_op_num_threads",
          [](const PythonSessionOptions& options) { return options.inter_op_num_threads; },
          &SetInterOpThreads,
          "Accepted and changes nothing: epctx runs nodes one at a time (kernels use "
          "intra_op_num_threads).")
      .def_readwrite("enable_cpu_mem_arena", &PythonSessionOptions::enable_cpu_mem_arena,
                     "Accepted and changes nothing: the activation arena cannot be turned off.")
      .def_readwrite("enable_mem_pattern", &PythonSessionOptions::enable_mem_pattern,
                     "Accepted and changes nothing: the memory plan is compiled into the "
                     "program.")
      .def("__copy__",
           [](const PythonSessionOptions& options) { return PythonSessionOptions(options); })
      .def("__deepcopy__", [](const PythonSessionOptions& options,
                              py::dict) { return PythonSessionOptions(options); })
      .def("__repr__", &Repr);
  AddRefusedAttribute(cls, "log_severity_level",
                      "epctx has one log level per process: set it with "
                      "epctx.set_default_logger_severity(level)");
  AddRefusedAttribute(cls, "log_verbosity_level",
                      "epctx has one log level per process: set it with "
                      "epctx.set_default_logger_severity(level)");
  AddRefusedAttribute(cls, "optimized_model_filepath",
                      "epctx's compiled form is a context model and its blob: write them with "
                      "epctx.ModelCompiler (or `epctx compile`)");
}

}  // namespace epctx::python
