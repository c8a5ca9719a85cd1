#include "arrays.h"

namespace epctx::python {
namespace {

// NumPy kind and item size -> epctx type; kUndefined when epctx has no such type.
DataType DataTypeOf(const py::dtype& dtype) {
  char kind = dtype.kind();
  size_t size = static_cast<size_t>(dtype.itemsize());
  switch (kind) {
    case 'f':
      return size == 4   ? DataType::kFloat32
             : size == 8 ? DataType::kFloat64
             : size == 2 ? DataType::kFloat16
                         : DataType::kUndefined;
    case 'i':
      return size == 1   ? DataType::kInt8
             : size == 2 ? DataType::kInt16
             : size == 4 ? DataType::kInt32
             : size == 8 ? DataType::kInt64
                         : DataType::kUndefined;
    case 'u':
      return size == 1   ? DataType::kUint8
             : size == 2 ? DataType::kUint16
             : size == 4 ? DataType::kUint32
             : size == 8 ? DataType::kUint64
                         : DataType::kUndefined;
    case 'b':
      return size == 1 ? DataType::kBool : DataType::kUndefined;
    default:
      return DataType::kUndefined;
  }
}

const char* NumpyTypeName(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return "float32";
    case DataType::kFloat64:
      return "float64";
    case DataType::kFloat16:
      return "float16";
    case DataType::kInt8:
      return "int8";
    case DataType::kInt16:
      return "int16";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt64:
      return "int64";
    case DataType::kUint8:
      return "uint8";
    case DataType::kUint16:
      return "uint16";
    case DataType::kUint32:
      return "uint32";
    case DataType::kUint64:
      return "uint64";
    case DataType::kBool:
      return "bool";
    default:
      return nullptr;
  }
}

bool IsAligned(const py::array& array) {
  return array.attr("flags").attr("aligned").cast<bool>();
}

bool IsNativeOrder(const py::array& array) {
  return array.dtype().attr("isnative").cast<bool>();
}

}  // namespace

bool CanReadInPlace(const py::array& array) {
  return DataTypeOf(array.dtype()) != DataType::kUndefined &&
         (array.flags() & py::array::c_style) != 0 && IsAligned(array) && IsNativeOrder(array);
}

InputArray ToInput(const std::string& name, py::handle value) {
  py::module_ np = py::module_::import("numpy");
  py::array array = py::isinstance<py::array>(value) ? py::reinterpret_borrow<py::array>(value)
                                                     : py::array(np.attr("asarray")(value));
  DataType type = DataTypeOf(array.dtype());
  if (type == DataType::kUndefined) {
    ThrowStatus(Status(StatusCode::kInvalidArgument,
                       "input '" + name + "' has NumPy dtype " +
                           py::str(array.dtype()).cast<std::string>() +
                           ", which epctx does not take (bool, int8-64, uint8-64, float16, "
                           "float32, float64)"));
  }
  if (!CanReadInPlace(array)) {
    py::object native = array.dtype().attr("newbyteorder")("=");
    array = py::array(np.attr("ascontiguousarray")(array, native));
  }
  std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
  Tensor tensor = Tensor::View(type, std::move(shape), array.data(), nullptr);
  return InputArray{std::move(array), std::move(tensor)};
}

py::array ToNumpy(const std::string& name, Tensor tensor) {
  const char* numpy_type = NumpyTypeName(tensor.dtype());
  if (numpy_type == nullptr) {
    ThrowStatus(Status(StatusCode::kUnsupported, "output '" + name + "' has element type " +
                                                     DataTypeName(tensor.dtype()) +
                                                     ", which NumPy has no dtype for"));
  }
  std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  auto* owned = new Tensor(std::move(tensor));
  py::capsule owner(owned, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(py::dtype(numpy_type), shape, owned->mutable_data(), owner);
}

std::string OnnxTypeName(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return "float";
    case DataType::kFloat64:
      return "double";
    case DataType::kFloat16:
      return "float16";
    case DataType::kBFloat16:
      return "bfloat16";
    case DataType::kString:
      return "string";
    default:
      return DataTypeName(type);  // int8 ... uint64, bool: the same names
  }
}

}  // namespace epctx::python
