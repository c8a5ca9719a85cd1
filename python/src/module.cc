// The native half of the Python package: epctx._epctx.
#include "bindings.h"

PYBIND11_MODULE(_epctx, m) {
  namespace py = pybind11;
  namespace ep = epctx::python;
  m.doc() = "epctx native bindings; use the epctx package, which shapes them like onnxruntime.";
  ep::RegisterErrors(m);
  ep::RegisterOptions(m);
  ep::RegisterOrtValue(m);
  ep::RegisterRunOptions(m);
  ep::RegisterSession(m);
  ep::RegisterCompiler(m);
  m.def("engine_version", [] { return std::string(epctx::EngineVersion()); });
  m.def(
      "set_log_level",
      [](int level) {
        if (level < 0 || level > static_cast<int>(epctx::LogLevel::kOff)) {
          ep::ThrowStatus(epctx::Status(
              epctx::StatusCode::kInvalidArgument,
              "log level " + std::to_string(level) + " is not one of 0 (debug) .. 4 (off)"));
        }
        epctx::SetLogLevel(static_cast<epctx::LogLevel>(level));
      },
      py::arg("level"));
}
