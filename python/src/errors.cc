// Python exceptions for the engine's status codes. Each class also derives from the built-in
// exception a Python user would catch for that kind of failure (ValueError for a bad argument,
// FileNotFoundError for a missing file, ...), and every one from epctx.EpctxError (a
// RuntimeError, as onnxruntime's get_session_config_entry raises for a missing key).
#include <Python.h>

#include <atomic>
#include <map>

#include "bindings.h"

namespace epctx::python {
namespace {

// Thrown inside the binding and turned into the Python exception by the registered translator,
// so that a Python exception is only ever created with the GIL held.
struct StatusException {
  Status status;
};

std::map<StatusCode, py::object>& Classes() {
  static auto* classes = new std::map<StatusCode, py::object>();
  return *classes;
}

std::atomic<bool> g_last_call_held_gil{false};

struct ClassSpec {
  StatusCode code;
  const char* name;
  PyObject* builtin;  // the extra built-in base, or null
  const char* doc;
};

}  // namespace

void NoteEngineCallStarted() {
  g_last_call_held_gil = PyGILState_Check() != 0;
}

bool LastEngineCallHeldGil() {
  return g_last_call_held_gil;
}

[[noreturn]] void ThrowStatus(const Status& status) {
  throw StatusException{status};
}

[[noreturn]] void ThrowInvalid(const std::string& message) {
  ThrowStatus(Status(StatusCode::kInvalidArgument, message));
}

void RegisterErrors(py::module_& m) {
  py::object base = py::reinterpret_steal<py::object>(
      PyErr_NewExceptionWithDoc("epctx.EpctxError",
                                "Base class of every error the epctx engine reports; "
                                "`code` names the engine's status code.",
                                PyExc_RuntimeError, nullptr));
  if (!base) throw py::error_already_set();
  m.attr("EpctxError") = base;

  const ClassSpec specs[] = {
      {StatusCode::kInvalidArgument, "InvalidArgument", PyExc_ValueError,
       "An argument, option or input the engine cannot use."},
      {StatusCode::kNotFound, "NotFound", PyExc_FileNotFoundError,
       "A file or model that does not exist."},
      {StatusCode::kIoError, "IoError", PyExc_OSError,
       "The operating system refused a read, write, map or stat."},
      {StatusCode::kCorrupt, "Corrupt", nullptr, "A file's bytes fail verification."},
      {StatusCode::kVersionMismatch, "VersionMismatch", nullptr,
       "Written by another format or engine version."},
      {StatusCode::kTargetMismatch, "TargetMismatch", nullptr,
       "Packed for another CPU target or another build of the kernels."},
      {StatusCode::kStale, "Stale", nullptr, "The cache no longer matches its original model."},
      {StatusCode::kUnsupported, "Unsupported", PyExc_NotImplementedError,
       "An operator, attribute, data type or option epctx does not implement."},
      {StatusCode::kFailedPrecondition, "FailedPrecondition", nullptr,
       "A state the call cannot work in (for example neither the blob nor the original model "
       "can serve)."},
      {StatusCode::kInternal, "Internal", nullptr, "A bug in epctx, or out of memory."},
      {StatusCode::kCancelled, "Cancelled", nullptr,
       "A run stopped before its end: RunOptions.terminate, or a limit it reached "
       "(epctx.max_loop_iterations, epctx.max_value_bytes)."},
  };
  for (const ClassSpec& spec : specs) {
    py::tuple bases = spec.builtin != nullptr ? py::make_tuple(base, py::handle(spec.builtin))
                                              : py::make_tuple(base);
    std::string qualified = std::string("epctx.") + spec.name;
    py::object cls = py::reinterpret_steal<py::object>(
        PyErr_NewExceptionWithDoc(qualified.c_str(), spec.doc, bases.ptr(), nullptr));
    if (!cls) throw py::error_already_set();
    // On the class too, so that an error raised by the package's Python code has its code.
    cls.attr("code") = StatusCodeName(spec.code);
    m.attr(spec.name) = cls;
    Classes()[spec.code] = cls;
  }
  Classes()[StatusCode::kOk] = base;  // never raised; keeps the lookup total

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusException& e) {
      auto it = Classes().find(e.status.code());
      py::object cls = it != Classes().end() ? it->second : Classes()[StatusCode::kInternal];
      py::object error = cls(e.status.message());
      error.attr("code") = StatusCodeName(e.status.code());
      PyErr_SetObject(cls.ptr(), error.ptr());
    }
  });
}

}  // namespace epctx::python
