// epctx._epctx._OrtValue: one value with what keeps its memory alive, under onnxruntime's
// OrtValue and IOBinding (python/epctx/_iobinding.py), so that arrays, bound buffers and engine
// outputs pass between Python and runs without copies.
#pragma once

#include "bindings.h"

namespace epctx::python {

struct OrtValueHolder {
  // A tensor, a sequence or an empty optional; an empty Tensor() before an output has a value.
  Tensor tensor;
  // The NumPy array whose memory `tensor` views (None when the tensor owns its memory, or views
  // memory the caller gave by address).
  py::object keep_alive = py::none();
  // False for a view of a read-only array, which no run may write (bound as an output).
  bool writable = true;
};

void RegisterOrtValue(py::module_& m);

}  // namespace epctx::python
