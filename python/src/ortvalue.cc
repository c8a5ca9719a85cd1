// epctx._epctx._OrtValue: tensors over NumPy arrays (viewed in place), over memory the caller
// gives by address (onnxruntime's bind_input/bind_output with buffer_ptr), or allocated here;
// numpy() views the value's memory without a copy.
#include "ortvalue.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>

#include "arrays.h"

namespace epctx::python {
namespace {

std::vector<int64_t> ShapeOf(const std::string& who, const py::handle shape) {
  std::vector<int64_t> dims;
  for (py::handle d : py::reinterpret_borrow<py::iterable>(shape)) {
    const int64_t dim = py::int_(py::reinterpret_borrow<py::object>(d)).cast<int64_t>();
    if (dim < 0) ThrowInvalid(who + ": shape has a negative dim (" + std::to_string(dim) + ")");
    dims.push_back(dim);
  }
  return dims;
}

std::string Describe(const Tensor& t) {
  if (t.empty()) return "no value";
  if (t.kind() != ValueKind::kTensor) return std::string(ValueKindName(t.kind()));
  return "a tensor";
}

OrtValueHolder FromNumpy(py::handle array) {
  InputArray in = ArrayToTensor("OrtValue.ortvalue_from_numpy", array);
  OrtValueHolder v;
  v.tensor = std::move(in.tensor);
  v.keep_alive = std::move(in.owner);
  // A string tensor and a copy of a non-contiguous array are memory of their own: writable.
  if (v.keep_alive.ptr() == array.ptr()) {
    v.writable = v.keep_alive.attr("flags").attr("writeable").cast<bool>();
  }
  return v;
}

OrtValueHolder FromShapeAndType(py::handle shape, py::handle element_type) {
  const std::string who = "OrtValue.ortvalue_from_shape_and_type";
  DataType type = ElementType(who, element_type);
  OrtValueHolder v;
  v.tensor = ValueOrThrow(Tensor::Allocate(type, ShapeOf(who, shape)));
  // onnxruntime leaves it uninitialized; zeros cost one pass and make every read defined.
  if (v.tensor.byte_size() > 0) std::memset(v.tensor.mutable_data(), 0, v.tensor.byte_size());
  return v;
}

// Memory given by address, as onnxruntime's bind_input/bind_output take a buffer_ptr: the
// caller keeps it valid (and, for an output, writable) while the binding uses it.
OrtValueHolder FromAddress(uintptr_t address, py::handle element_type, py::handle shape,
                           const std::string& who) {
  DataType type = ElementType(who, element_type);
  std::vector<int64_t> dims = ShapeOf(who, shape);
  OrtValueHolder v;
  v.tensor = Tensor::View(type, std::move(dims), reinterpret_cast<const void*>(address), nullptr);
  if (v.tensor.byte_size() > 0 && address == 0) ThrowInvalid(who + ": buffer_ptr is 0 (NULL)");
  return v;
}

const Tensor& TensorOf(const OrtValueHolder& v, const char* what) {
  if (v.tensor.empty() || v.tensor.kind() != ValueKind::kTensor) {
    ThrowInvalid(std::string(what) + " needs an OrtValue holding a tensor; this one holds " +
                 Describe(v.tensor));
  }
  return v.tensor;
}

py::object Numpy(py::object self) {
  const OrtValueHolder& v = self.cast<const OrtValueHolder&>();
  const Tensor& t = TensorOf(v, "numpy()");
  if (t.dtype() == DataType::kString) return OutputConverter().ToPython("OrtValue", t);
  const char* numpy_type = NumpyTypeName(t.dtype());
  if (numpy_type == nullptr) {
    ThrowStatus(Status(
        StatusCode::kUnsupported,
        "OrtValue has element type " + DataTypeName(t.dtype()) + ", which NumPy has no dtype for"));
  }
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  if (t.byte_size() == 0) {
    return py::module_::import("numpy").attr("empty")(shape, py::dtype(numpy_type));
  }
  // The array's base is this OrtValue, which keeps the memory (and any array it views) alive.
  py::array array(py::dtype(numpy_type), shape, const_cast<void*>(t.data()), self);
  if (!v.writable) array.attr("setflags")(py::arg("write") = false);
  return array;
}

void UpdateInPlace(OrtValueHolder& v, py::handle value) {
  const Tensor& t = TensorOf(v, "update_inplace()");
  if (!v.writable) ThrowInvalid("update_inplace(): the OrtValue views a read-only array");
  InputArray in = ArrayToTensor("update_inplace()", value);
  if (in.tensor.dtype() != t.dtype() || in.tensor.element_count() != t.element_count() ||
      t.dtype() == DataType::kString) {
    ThrowInvalid("update_inplace(): the array is " + DataTypeName(in.tensor.dtype()) + " " +
                 ShapeToString(in.tensor.shape()) + ", the OrtValue " + DataTypeName(t.dtype()) +
                 " " + ShapeToString(t.shape()) +
                 " (the element type and count must be the same; strings cannot be updated)");
  }
  if (t.byte_size() > 0) {
    std::memmove(const_cast<void*>(t.data()), in.tensor.data(), t.byte_size());
  }
}

std::string DataTypeString(const OrtValueHolder& v) {
  if (v.tensor.empty()) ThrowInvalid("data_type(): the OrtValue holds no value");
  ValueInfo info;
  info.kind = v.tensor.kind() == ValueKind::kNone ? v.tensor.none_of() : v.tensor.kind();
  info.optional = v.tensor.kind() == ValueKind::kNone;
  info.dtype = v.tensor.dtype();
  return OnnxTypeString(info);
}

}  // namespace

void RegisterOrtValue(py::module_& m) {
  py::class_<OrtValueHolder>(m, "_OrtValue")
      .def(py::init<>())
      .def_static("from_numpy", &FromNumpy, py::arg("array"))
      .def_static("from_shape_and_type", &FromShapeAndType, py::arg("shape"),
                  py::arg("element_type"))
      .def_static("from_address", &FromAddress, py::arg("address"), py::arg("element_type"),
                  py::arg("shape"), py::arg("who"))
      .def("numpy", &Numpy)
      .def("update_inplace", &UpdateInPlace, py::arg("array"))
      .def("copy_to_python",
           [](const OrtValueHolder& v) -> py::object {
             if (v.tensor.empty()) return py::none();
             return OutputConverter().ToPython("OrtValue", ValueOrThrow(v.tensor.Clone()));
           })
      .def("data_type", &DataTypeString)
      .def("element_type",
           [](const OrtValueHolder& v) {
             if (v.tensor.empty()) ThrowInvalid("element_type(): the OrtValue holds no value");
             return static_cast<int>(v.tensor.dtype());
           })
      .def("shape",
           [](const OrtValueHolder& v) {
             if (v.tensor.empty()) ThrowInvalid("shape(): the OrtValue holds no value");
             return v.tensor.shape();
           })
      .def("data_ptr",
           [](const OrtValueHolder& v) {
             return reinterpret_cast<uintptr_t>(TensorOf(v, "data_ptr()").data());
           })
      .def("has_value",
           [](const OrtValueHolder& v) {
             return !v.tensor.empty() && v.tensor.kind() != ValueKind::kNone;
           })
      .def("is_tensor",
           [](const OrtValueHolder& v) {
             return !v.tensor.empty() && v.tensor.kind() == ValueKind::kTensor;
           })
      .def("is_tensor_sequence",
           [](const OrtValueHolder& v) { return v.tensor.kind() == ValueKind::kSequence; })
      .def_property_readonly("writable", [](const OrtValueHolder& v) { return v.writable; });
}

}  // namespace epctx::python
