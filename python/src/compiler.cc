// Compiling original models from Python: to a context model file or to its bytes, from a path
// or from bytes, with the GIL released while the engine works.
#include <pybind11/stl.h>

#include <optional>

#include "bindings.h"

namespace epctx::python {
namespace {

// The original model: a path, or bytes (held by the caller for the whole call).
struct ModelArg {
  std::optional<std::string> path;
  std::span<const std::byte> bytes;
};

ModelArg ModelFrom(const py::object& model) {
  ModelArg arg;
  if (py::isinstance<py::bytes>(model)) {
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(model.ptr(), &data, &size) != 0) throw py::error_already_set();
    arg.bytes = {reinterpret_cast<const std::byte*>(data), static_cast<size_t>(size)};
  } else {
    arg.path = model.cast<std::string>();
  }
  return arg;
}

py::dict ReportToDict(const CompileReport& r) {
  py::dict d;
  d["context_model_path"] = r.context_model_path;
  d["blob_path"] = r.blob_path;
  d["blob_size"] = r.blob_size;
  d["weight_bytes"] = r.weight_bytes;
  d["weight_count"] = r.weight_count;
  d["node_count"] = r.node_count;
  d["blob_pending"] = r.blob_pending;
  return d;
}

py::dict CompileToFile(const SessionOptions& options, const py::object& model,
                       const std::string& output_path) {
  ModelArg arg = ModelFrom(model);
  Result<CompileReport> report = Status(StatusCode::kInternal, "not compiled");
  {
    py::gil_scoped_release release;
    NoteEngineCallStarted();
    ModelCompiler compiler(options);
    report = arg.path ? compiler.CompileToFile(*arg.path, output_path)
                      : compiler.CompileToFile(arg.bytes, output_path);
  }
  return ReportToDict(ValueOrThrow(std::move(report)));
}

py::bytes CompileToBytes(const SessionOptions& options, const py::object& model) {
  ModelArg arg = ModelFrom(model);
  Result<std::string> bytes = Status(StatusCode::kInternal, "not compiled");
  {
    py::gil_scoped_release release;
    NoteEngineCallStarted();
    ModelCompiler compiler(options);
    bytes = arg.path ? compiler.CompileToBytes(*arg.path) : compiler.CompileToBytes(arg.bytes);
  }
  return py::bytes(ValueOrThrow(std::move(bytes)));
}

}  // namespace

void RegisterCompiler(py::module_& m) {
  m.def("_compile_to_file", &CompileToFile, py::arg("options"), py::arg("model"),
        py::arg("output_path"),
        "Compiles `model` (a path or bytes) to the context model `output_path` and its blob; "
        "returns what was written.");
  m.def("_compile_to_bytes", &CompileToBytes, py::arg("options"), py::arg("model"),
        "Compiles `model` (a path or bytes) and returns the context model's bytes.");
}

}  // namespace epctx::python
