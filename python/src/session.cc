// epctx._epctx._Session: a loaded model that runs NumPy inputs (and lists of them for sequences,
// None for empty optionals). The GIL is released while the
// engine creates the session and runs it, so several Python threads can work at once (runs of
// one session are serialized inside the engine).
#include <pybind11/stl.h>

#include <unordered_map>

#include "arrays.h"
#include "bindings.h"
#include "ortvalue.h"

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

// The feed as the engine takes it: arrays (read in place where they can be), lists for
// sequences, None for empty optionals, and _OrtValue objects as they are. `held` keeps alive
// what the tensors view. An optional input left out is an empty optional, as in onnxruntime.
std::unordered_map<std::string, Tensor> ToInputs(const Session& session, const py::dict& feed,
                                                 std::vector<py::object>& held) {
  std::unordered_map<std::string, Tensor> inputs;
  held.reserve(feed.size());
  for (auto [key, value] : feed) {
    if (!py::isinstance<py::str>(key)) {
      throw py::type_error("input_feed keys must be input names (str), got " +
                           py::repr(key).cast<std::string>());
    }
    std::string name = key.cast<std::string>();
    if (py::isinstance<OrtValueHolder>(value)) {
      const OrtValueHolder& v = value.cast<const OrtValueHolder&>();
      if (v.tensor.empty()) {
        ThrowStatus(Status(StatusCode::kInvalidArgument,
                           "input '" + name + "' is an OrtValue that holds no value yet"));
      }
      held.push_back(py::reinterpret_borrow<py::object>(value));
      inputs.emplace(name, v.tensor);
      continue;
    }
    InputArray in = ToInput(name, value, FindInput(session, name));
    held.push_back(std::move(in.owner));
    inputs.emplace(name, std::move(in.tensor));
  }
  for (const ValueInfo& v : session.inputs()) {
    if (v.optional && !inputs.contains(v.name))
      inputs.emplace(v.name, Tensor::None(v.dtype, v.kind));
  }
  return inputs;
}

// `run_options` may be null (None): the defaults. Copies share the terminate flag, so another
// Python thread can still stop the run through its own object.
RunOptions OptionsOf(const RunOptions* run_options) {
  return run_options != nullptr ? *run_options : RunOptions();
}

std::vector<Tensor> RunTensors(Session& session, const std::vector<std::string>& output_names,
                               const py::dict& feed, const RunOptions* run_options) {
  std::vector<py::object> held;  // keeps every array read in place alive across the run
  std::unordered_map<std::string, Tensor> inputs = ToInputs(session, feed, held);
  const RunOptions options = OptionsOf(run_options);
  Result<std::vector<Tensor>> result = Status(StatusCode::kInternal, "not run");
  {
    py::gil_scoped_release release;
    NoteEngineCallStarted();
    result = session.Run(options, inputs, output_names);
  }
  return ValueOrThrow(std::move(result));
}

py::list Run(Session& session, const std::vector<std::string>& output_names, const py::dict& feed,
             const RunOptions* run_options) {
  std::vector<Tensor> outputs = RunTensors(session, output_names, feed, run_options);
  const std::vector<ValueInfo>& infos = session.outputs();
  py::list values;
  OutputConverter converter;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string name = output_names.empty() ? infos[i].name : output_names[i];
    values.append(converter.ToPython(name, std::move(outputs[i])));
  }
  return values;
}

// onnxruntime's run_with_ort_values: the outputs as _OrtValue objects, without conversion.
py::list RunWithOrtValues(Session& session, const std::vector<std::string>& output_names,
                          const py::dict& feed, const RunOptions* run_options) {
  py::list values;
  for (Tensor& t : RunTensors(session, output_names, feed, run_options)) {
    OrtValueHolder v;
    v.tensor = std::move(t);
    values.append(py::cast(std::move(v)));
  }
  return values;
}

// A run of an IOBinding: `bindings` lists (output name, _OrtValue to write it into, or None to
// have the run allocate it). Returns one _OrtValue per binding, in order: the bound object
// itself, or a new one holding what the run allocated.
py::list RunWithBindings(Session& session, const py::dict& feed, const py::list& bindings,
                         const RunOptions* run_options) {
  std::vector<py::object> held;
  std::unordered_map<std::string, Tensor> inputs = ToInputs(session, feed, held);
  std::unordered_map<std::string, Tensor> outputs;
  std::vector<std::pair<std::string, py::object>> order;
  for (py::handle item : bindings) {
    auto [name, value] = item.cast<std::pair<std::string, py::object>>();
    Tensor bound;
    if (!value.is_none()) {
      const OrtValueHolder& v = value.cast<const OrtValueHolder&>();
      if (!v.writable) {
        ThrowStatus(Status(StatusCode::kInvalidArgument,
                           "output '" + name +
                               "' is bound to an OrtValue over a read-only array, which a run "
                               "cannot write"));
      }
      if (v.tensor.empty()) {
        ThrowStatus(Status(StatusCode::kInvalidArgument,
                           "output '" + name + "' is bound to an OrtValue that holds no value"));
      }
      bound = v.tensor;
    }
    if (!outputs.emplace(name, std::move(bound)).second) {
      ThrowStatus(Status(StatusCode::kInvalidArgument, "output '" + name + "' is bound twice"));
    }
    order.emplace_back(name, value);
  }
  const RunOptions options = OptionsOf(run_options);
  Status status = Status(StatusCode::kInternal, "not run");
  {
    py::gil_scoped_release release;
    NoteEngineCallStarted();
    status = session.Run(options, inputs, outputs);
  }
  if (!status.ok()) ThrowStatus(status);
  py::list values;
  for (auto& [name, value] : order) {
    if (!value.is_none()) {
      values.append(value);
      continue;
    }
    OrtValueHolder v;
    v.tensor = std::move(outputs[name]);
    values.append(py::cast(std::move(v)));
  }
  return values;
}

py::dict Origin(const Session& session) {
  const SessionOrigin& o = session.origin();
  py::dict d;
  d["from_context_blob"] = o.from_context_blob;
  d["context_model_path"] = o.context_model_path;
  d["blob_path"] = o.blob_path;
  d["load_mode"] = o.load_mode;
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
      .def("run", &Run, py::arg("output_names"), py::arg("input_feed"),
           py::arg("run_options").none(true))
      .def("run_with_ort_values", &RunWithOrtValues, py::arg("output_names"), py::arg("input_feed"),
           py::arg("run_options").none(true))
      .def("run_with_bindings", &RunWithBindings, py::arg("input_feed"), py::arg("bindings"),
           py::arg("run_options").none(true))
      .def("end_profiling", [](Session& session) {
        Result<std::string> path = Status(StatusCode::kInternal, "not ended");
        {
          py::gil_scoped_release release;
          path = session.EndProfiling();
        }
        return ValueOrThrow(std::move(path));
      });
  m.def("_can_read_in_place", &CanReadInPlace, py::arg("array"),
        "Whether run() reads this array in place (no copy).");
  m.def("_last_engine_call_held_gil", &LastEngineCallHeldGil);
}

}  // namespace epctx::python
