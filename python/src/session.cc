// epctx._epctx._Session: a loaded model that runs NumPy inputs (and lists of them for sequences,
// None for empty optionals). The GIL is released while the
// engine creates the session and runs it, so several Python threads can work at once (runs of
// one session are serialized inside the engine).
#include <pybind11/stl.h>

#include <unordered_map>

#include "arrays.h"
#include "bindings.h"

namespace epctx::python {
namespace {

std::unique_ptr<Session> CreateFromPath(const std::string& path, const SessionOptions& options) {
  Result<std::unique_ptr<Session>> created = Status(StatusCode::kInternal, "not created");
  {
    py::gil_scoped_release release;
    NoteEngineCallStarted();
    created = Session::Create(path, options);
  }
  return ValueOrThrow(std::move(created));
}

std::unique_ptr<Session> CreateFromBytes(const py::bytes& bytes, const SessionOptions& options) {
  char* data = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(bytes.ptr(), &data, &size) != 0) throw py::error_already_set();
  std::span<const std::byte> model(reinterpret_cast<const std::byte*>(data),
                                   static_cast<size_t>(size));
  Result<std::unique_ptr<Session>> created = Status(StatusCode::kInternal, "not created");
  {
    // `bytes` is immutable and held by the caller for the whole call.
    py::gil_scoped_release release;
    NoteEngineCallStarted();
    created = Session::CreateFromMemory(model, options);
  }
  return ValueOrThrow(std::move(created));
}

// (name, 'tensor(float)', [1, 3, 'height', None]) per value; None for an open dim without name.
// Sequences have no shape ([]), as in onnxruntime.
py::list Describe(const std::vector<ValueInfo>& values) {
  py::list out;
  for (const ValueInfo& v : values) {
    py::list shape;
    for (size_t d = 0; d < v.shape.size(); ++d) {
      if (v.shape[d] >= 0) {
        shape.append(v.shape[d]);
      } else if (d < v.dim_names.size() && !v.dim_names[d].empty()) {
        shape.append(v.dim_names[d]);
      } else {
        shape.append(py::none());
      }
    }
    out.append(py::make_tuple(v.name, OnnxTypeString(v), shape));
  }
  return out;
}

const ValueInfo* FindInput(const Session& session, const std::string& name) {
  for (const ValueInfo& v : session.inputs()) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

py::list Run(Session& session, const std::vector<std::string>& output_names, const py::dict& feed) {
  std::vector<InputArray> held;  // keeps every array read in place alive across the run
  held.reserve(feed.size());
  std::unordered_map<std::string, Tensor> inputs;
  for (auto [key, value] : feed) {
    if (!py::isinstance<py::str>(key)) {
      throw py::type_error("input_feed keys must be input names (str), got " +
                           py::repr(key).cast<std::string>());
    }
    std::string name = key.cast<std::string>();
    held.push_back(ToInput(name, value, FindInput(session, name)));
    inputs.emplace(name, held.back().tensor);
  }
  // An optional input left out of the feed is an empty optional, as in onnxruntime.
  for (const ValueInfo& v : session.inputs()) {
    if (v.optional && !inputs.contains(v.name))
      inputs.emplace(v.name, Tensor::None(v.dtype, v.kind));
  }
  Result<std::vector<Tensor>> result = Status(StatusCode::kInternal, "not run");
  {
    py::gil_scoped_release release;
    NoteEngineCallStarted();
    result = session.Run(inputs, output_names);
  }
  std::vector<Tensor> outputs = ValueOrThrow(std::move(result));
  const std::vector<ValueInfo>& infos = session.outputs();
  py::list values;
  OutputConverter converter;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string name = output_names.empty() ? infos[i].name : output_names[i];
    values.append(converter.ToPython(name, std::move(outputs[i])));
  }
  return values;
}

py::dict Origin(const Session& session) {
  const SessionOrigin& o = session.origin();
  py::dict d;
  d["from_context_blob"] = o.from_context_blob;
  d["context_model_path"] = o.context_model_path;
  d["blob_path"] = o.blob_path;
  d["original_model_path"] = o.original_model_path;
  d["fallback_reason"] = o.fallback_reason;
  return d;
}

py::dict Metadata(const Session& session) {
  const ModelMetadata& m = session.metadata();
  py::dict d;
  d["producer_name"] = m.producer_name;
  d["producer_version"] = m.producer_version;
  d["domain"] = m.domain;
  d["version"] = m.model_version;
  d["description"] = m.doc_string;
  d["graph_name"] = m.graph_name;
  d["graph_description"] = m.graph_doc_string;
  d["custom_metadata_map"] = m.custom_metadata;
  return d;
}

}  // namespace

void RegisterSession(py::module_& m) {
  py::class_<Session, std::unique_ptr<Session>>(m, "_Session")
      .def_static("from_path", &CreateFromPath, py::arg("path"), py::arg("options"))
      .def_static("from_bytes", &CreateFromBytes, py::arg("model"), py::arg("options"))
      .def_property_readonly("inputs", [](const Session& s) { return Describe(s.inputs()); })
      .def_property_readonly("outputs", [](const Session& s) { return Describe(s.outputs()); })
      .def_property_readonly("origin", &Origin)
      .def_property_readonly("metadata", &Metadata)
      .def("run", &Run, py::arg("output_names"), py::arg("input_feed"));
  m.def("_can_read_in_place", &CanReadInPlace, py::arg("array"),
        "Whether run() reads this array in place (no copy).");
  m.def("_last_engine_call_held_gil", &LastEngineCallHeldGil);
}

}  // namespace epctx::python
