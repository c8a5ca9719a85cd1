// epctx.RunOptions: onnxruntime's RunOptions over epctx::RunOptions. Of its attributes epctx has
// `terminate`: set from any thread, it stops the runs that use these options at their next check
// (before every node, and every Loop or Scan iteration) with epctx.Cancelled.
#include "bindings.h"

namespace epctx::python {

void RegisterRunOptions(py::module_& m) {
  py::class_<RunOptions>(m, "RunOptions", "Settings of runs, as onnxruntime's RunOptions.")
      .def(py::init<>())
      .def_property(
          "terminate", &RunOptions::terminate,
          [](RunOptions& options, bool terminate) {
            if (terminate) {
              options.SetTerminate();
            } else {
              options.UnsetTerminate();
            }
          },
          "True stops the runs using these options (in flight or started later) with "
          "epctx.Cancelled; False lets runs go on again.")
      .def("__repr__", [](const RunOptions& options) {
        return std::string("RunOptions(terminate=") + (options.terminate() ? "True" : "False") +
               ")";
      });
}

}  // namespace epctx::python
