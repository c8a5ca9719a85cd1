// NumPy arrays <-> epctx tensors without copies where that is safe.
#pragma once

#include <pybind11/numpy.h>

#include <string>

#include "bindings.h"

namespace epctx::python {

// An input as the engine reads it: a view of `array`'s memory, which `array` keeps alive.
struct InputArray {
  py::array array;  // the caller's array, or a contiguous native-order copy of it
  Tensor tensor;
};

// Whether the engine can read `array` in place: C-contiguous, aligned for its element type, in
// native byte order, of a type epctx knows.
bool CanReadInPlace(const py::array& array);

// `value` (an array, or anything numpy.asarray accepts) as input `name`: read in place when
// CanReadInPlace, else copied once into a contiguous native-order array. Raises
// epctx.InvalidArgument for a dtype epctx does not take.
InputArray ToInput(const std::string& name, py::handle value);

// Hands the tensor's memory to a new array without copying: the array's base owns the tensor.
// Raises epctx.Unsupported for element types NumPy lacks (bfloat16).
py::array ToNumpy(const std::string& name, Tensor tensor);

// ONNX's name of an element type, as onnxruntime prints it in 'tensor(float)'.
std::string OnnxTypeName(DataType type);

}  // namespace epctx::python
