// epctx.SessionOptions: onnxruntime's SessionOptions names over epctx::SessionOptions. Entries
// are checked when added, so a wrong key fails at the line that sets it.
#include <charconv>

#include "bindings.h"

namespace epctx::python {
namespace {

constexpr const char* kThreadsKey = "session.intra_op_num_threads";

void AddEntry(SessionOptions& options, const std::string& key, const std::string& value) {
  Status valid = CheckConfigEntry(key, value);
  if (!valid.ok()) ThrowStatus(valid);
  options.AddConfigEntry(key, value);
}

int Threads(const SessionOptions& options) {
  std::string v = options.GetConfigEntry(kThreadsKey).value_or("0");
  int n = 0;
  std::from_chars(v.data(), v.data() + v.size(), n);  // checked when it was added
  return n;
}

}  // namespace

void RegisterOptions(py::module_& m) {
  py::class_<SessionOptions>(m, "SessionOptions",
                             "Options of sessions and compiles, as string key/value entries with "
                             "ONNX Runtime's key names where one exists (README: Options).")
      .def(py::init<>())
      .def("add_session_config_entry", &AddEntry, py::arg("config_key"), py::arg("config_value"),
           "Sets an entry; an unknown key or a bad value raises epctx.InvalidArgument naming the "
           "known keys or the accepted values.")
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
      .def("__copy__", [](const SessionOptions& options) { return SessionOptions(options); })
      .def("__deepcopy__",
           [](const SessionOptions& options, py::dict) { return SessionOptions(options); })
      .def("__repr__", [](const SessionOptions& options) {
        std::string out = "SessionOptions(";
        bool first = true;
        for (const auto& [key, value] : options.config_entries()) {
          out += (first ? "" : ", ") + key + "=" + value;
          first = false;
        }
        return out + ")";
      });
}

}  // namespace epctx::python
