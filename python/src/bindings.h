// The pieces of the native module epctx._epctx, each registered by its own file. The module sits
// on the public C++ API only (include/epctx/); the Python package (python/epctx/) shapes it like
// onnxruntime's API.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "epctx/epctx.h"

namespace epctx::python {

namespace py = pybind11;

void RegisterErrors(py::module_& m);
void RegisterOptions(py::module_& m);
void RegisterRunOptions(py::module_& m);
void RegisterSession(py::module_& m);
void RegisterCompiler(py::module_& m);
void RegisterOrtValue(py::module_& m);

// Raises the Python exception class that matches `status.code()`, carrying the engine's message.
// Call with the GIL held.
[[noreturn]] void ThrowStatus(const Status& status);
// Throws an InvalidArgument error (Python: epctx.InvalidArgument) with `message`.
[[noreturn]] void ThrowInvalid(const std::string& message);

template <typename T>
T ValueOrThrow(Result<T> result) {
  if (!result.ok()) ThrowStatus(result.status());
  return std::move(result).value();
}

// Testing aid: whether the GIL was held at the moment the last engine call (run or compile)
// started. Tests assert it was not, so several Python threads can work at once.
void NoteEngineCallStarted();
bool LastEngineCallHeldGil();

}  // namespace epctx::python
