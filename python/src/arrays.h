// NumPy arrays <-> epctx tensors without copies where that is safe; strings, sequences (lists)
// and empty optionals (None) as onnxruntime's Python API passes them.
#pragma once

#include <pybind11/numpy.h>

#include <string>
#include <unordered_set>

#include "bindings.h"

namespace epctx::python {

// An input as the engine reads it: numeric arrays are viewed in place and kept alive by `owner`
// (the caller's array, or a contiguous native-order copy of it; a list of them for a sequence).
struct InputArray {
  py::object owner;
  Tensor tensor;
};

// Whether the engine can read `array` in place: C-contiguous, aligned for its element type, in
// native byte order, of a numeric type epctx knows.
bool CanReadInPlace(const py::array& array);

// `value` as input `name`, declared as `declared` (null when the model has no such input; the
// engine then reports the name). Numeric arrays (or anything numpy.asarray accepts) are read in
// place when CanReadInPlace, else copied once into a contiguous native-order array. Strings:
// NumPy '<U'/'S' arrays and object arrays of str (encoded UTF-8) or bytes (taken as they are),
// copied into a string tensor. A list or tuple of arrays for a sequence input; None for an
// optional input. Raises epctx.InvalidArgument for what epctx does not take.
InputArray ToInput(const std::string& name, py::handle value, const ValueInfo* declared);

// `value` (an array, or anything numpy.asarray accepts) as a tensor, as ToInput takes a numeric
// or string input; `who` names it in errors ("input 'x'").
InputArray ArrayToTensor(const std::string& who, py::handle value);

// The element type a NumPy dtype (or anything numpy.dtype accepts, like numpy.float32) or an
// ONNX TensorProto type number names; raises epctx.InvalidArgument naming `who` otherwise.
DataType ElementType(const std::string& who, py::handle element_type);

// NumPy's name of an element type ("float32"); nullptr for one NumPy lacks (bfloat16, string).
const char* NumpyTypeName(DataType type);

// Output values set free of each other: every numeric array owns its buffer (the engine's
// tensor, without a copy, unless another array already holds that buffer).
class OutputConverter {
 public:
  // A tensor as a NumPy array (strings: an object array of str, as onnxruntime returns them);
  // a sequence as a list of arrays; an empty optional as None. Raises epctx.Unsupported for
  // element types NumPy lacks (bfloat16), epctx.InvalidArgument for a string that is not UTF-8.
  py::object ToPython(const std::string& name, Tensor value);

 private:
  py::object ToNumpy(const std::string& name, Tensor tensor);
  std::unordered_set<const void*> handed_out_;
};

// onnxruntime's type string of a value: 'tensor(float)', 'seq(tensor(float))',
// 'optional(tensor(int64))', 'optional(seq(tensor(string)))'.
std::string OnnxTypeString(const ValueInfo& value);

// ONNX's name of an element type, as onnxruntime prints it in 'tensor(float)'.
std::string OnnxTypeName(DataType type);

}  // namespace epctx::python
