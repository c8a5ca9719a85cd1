// NumPy arrays <-> epctx tensors: numeric arrays viewed in place or handed over without copies;
// strings copied each way (NumPy has no UTF-8 array); sequences as lists, empty optionals as None.
#include "arrays.h"

#include <cstring>

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

}  // namespace

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

namespace {

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

namespace {

// Element `i` of a string input: str as UTF-8, bytes as they are.
std::string StringElement(const std::string& who, size_t i, py::handle item) {
  if (PyUnicode_Check(item.ptr())) {
    Py_ssize_t size = 0;
    const char* utf8 = PyUnicode_AsUTF8AndSize(item.ptr(), &size);
    if (utf8 == nullptr) {
      PyErr_Clear();  // a lone surrogate: not encodable as UTF-8
      ThrowInvalid(who + " string " + std::to_string(i) + " (" +
                   py::repr(item).cast<std::string>() +
                   ") cannot be encoded as UTF-8 (it holds a surrogate code point)");
    }
    return std::string(utf8, static_cast<size_t>(size));
  }
  if (PyBytes_Check(item.ptr())) {
    return std::string(PyBytes_AS_STRING(item.ptr()),
                       static_cast<size_t>(PyBytes_GET_SIZE(item.ptr())));
  }
  ThrowInvalid(who + " string " + std::to_string(i) + " is " +
               std::string(Py_TYPE(item.ptr())->tp_name) +
               ", expected str or bytes (an object array is taken as strings)");
}

// NumPy '<U', 'S' and object arrays as a string tensor. The items come from tolist(), which
// drops the NUL padding of '<U'/'S' elements as NumPy does when it reads one.
Tensor StringTensor(const std::string& who, const py::array& array) {
  std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
  Tensor tensor = ValueOrThrow(Tensor::Allocate(DataType::kString, shape));
  py::object items = array.attr("ravel")().attr("tolist")();
  py::list list = py::reinterpret_borrow<py::list>(items);
  std::string* out = tensor.mutable_data_as<std::string>();
  for (size_t i = 0; i < list.size(); ++i) out[i] = StringElement(who, i, list[i]);
  return tensor;
}

// `who`: "input 'x'", or "input 's' element 2" for an element of a sequence.
InputArray ArrayInput(const std::string& who, py::handle value) {
  py::module_ np = py::module_::import("numpy");
  py::array array = py::isinstance<py::array>(value) ? py::reinterpret_borrow<py::array>(value)
                                                     : py::array(np.attr("asarray")(value));
  char kind = array.dtype().kind();
  if (kind == 'U' || kind == 'S' || kind == 'O') {
    return InputArray{py::none(), StringTensor(who, array)};
  }
  DataType type = DataTypeOf(array.dtype());
  if (type == DataType::kUndefined) {
    ThrowInvalid(who + " has NumPy dtype " + py::str(array.dtype()).cast<std::string>() +
                 ", which epctx does not take (bool, int8-64, uint8-64, float16, float32, "
                 "float64; strings as '<U' arrays or object arrays of str)");
  }
  if (!CanReadInPlace(array)) {
    py::object native = array.dtype().attr("newbyteorder")("=");
    array = py::array(np.attr("ascontiguousarray")(array, native));
  }
  std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
  Tensor tensor = Tensor::View(type, std::move(shape), array.data(), nullptr);
  return InputArray{std::move(array), std::move(tensor)};
}

}  // namespace

InputArray ArrayToTensor(const std::string& who, py::handle value) {
  return ArrayInput(who, value);
}

DataType ElementType(const std::string& who, py::handle element_type) {
  if (PyLong_Check(element_type.ptr()) && !PyBool_Check(element_type.ptr())) {
    const long long onnx_type = element_type.cast<long long>();
    const DataType type = static_cast<DataType>(onnx_type);
    if (onnx_type > 0 && onnx_type < 64 && DataTypeSize(type) > 0) return type;
    ThrowInvalid(who + ": element_type " + std::to_string(onnx_type) +
                 " is not an ONNX tensor type epctx knows (onnx.TensorProto.FLOAT = 1, ...)");
  }
  py::dtype dtype;
  try {
    dtype = py::dtype::from_args(py::reinterpret_borrow<py::object>(element_type));
  } catch (const py::error_already_set&) {
    ThrowInvalid(who + ": element_type " + py::repr(element_type).cast<std::string>() +
                 " is neither a NumPy type (numpy.float32) nor an ONNX type number");
  }
  const DataType type = DataTypeOf(dtype);
  if (type == DataType::kUndefined) {
    ThrowInvalid(who + ": element_type " + py::str(dtype).cast<std::string>() +
                 " is not a numeric type epctx takes (bool, int8-64, uint8-64, float16, float32, "
                 "float64)");
  }
  return type;
}

InputArray ToInput(const std::string& name, py::handle value, const ValueInfo* declared) {
  if (value.is_none()) {
    // The engine refuses it for an input not declared optional, naming the input.
    return InputArray{py::none(), declared != nullptr
                                      ? Tensor::None(declared->dtype, declared->kind)
                                      : Tensor::None(DataType::kUndefined)};
  }
  if (declared == nullptr || declared->kind != ValueKind::kSequence) {
    return ArrayInput("input '" + name + "'", value);
  }
  if (!py::isinstance<py::list>(value) && !py::isinstance<py::tuple>(value)) {
    ThrowInvalid("input '" + name + "' is a sequence: give a list of arrays, not " +
                 std::string(Py_TYPE(value.ptr())->tp_name));
  }
  py::list owners;
  std::vector<Tensor> elements;
  DataType type = declared->dtype;
  size_t i = 0;
  for (py::handle item : py::reinterpret_borrow<py::sequence>(value)) {
    InputArray element = ArrayInput("input '" + name + "' element " + std::to_string(i++), item);
    if (elements.empty()) type = element.tensor.dtype();
    owners.append(element.owner);
    elements.push_back(std::move(element.tensor));
  }
  return InputArray{std::move(owners), Tensor::Sequence(type, std::move(elements))};
}

py::object OutputConverter::ToPython(const std::string& name, Tensor value) {
  switch (value.kind()) {
    case ValueKind::kNone:
      return py::none();
    case ValueKind::kSequence: {
      py::list list;
      for (const Tensor& element : value.elements()) list.append(ToNumpy(name, element));
      return list;
    }
    case ValueKind::kTensor:
      break;
  }
  return ToNumpy(name, std::move(value));
}

py::object OutputConverter::ToNumpy(const std::string& name, Tensor tensor) {
  std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  if (tensor.dtype() == DataType::kString) {
    py::array out(py::dtype("O"), shape);
    py::list items;
    const std::string* strings = tensor.data_as<std::string>();
    for (int64_t i = 0; i < tensor.element_count(); ++i) {
      const std::string& s = strings[i];
      PyObject* str = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "strict");
      if (str == nullptr) {
        PyErr_Clear();
        ThrowInvalid("output '" + name + "' element " + std::to_string(i) +
                     " is not UTF-8, so it cannot be a Python str");
      }
      items.append(py::reinterpret_steal<py::object>(str));
    }
    // Fills in C order whatever the shape (a 0-d array too).
    out.attr("reshape")(-1)[py::slice(0, tensor.element_count(), 1)] = items;
    return out;
  }
  const char* numpy_type = NumpyTypeName(tensor.dtype());
  if (numpy_type == nullptr) {
    ThrowStatus(Status(StatusCode::kUnsupported, "output '" + name + "' has element type " +
                                                     DataTypeName(tensor.dtype()) +
                                                     ", which NumPy has no dtype for"));
  }
  // One buffer reaches Python once: the same output asked for twice, or one tensor in several
  // places of a sequence, gives arrays that do not share memory.
  if (tensor.byte_size() > 0 && !handed_out_.insert(tensor.data()).second) {
    Tensor copy = ValueOrThrow(Tensor::Allocate(tensor.dtype(), tensor.shape()));
    std::memcpy(copy.mutable_data(), tensor.data(), tensor.byte_size());
    tensor = std::move(copy);
    handed_out_.insert(tensor.data());
  }
  auto* owned = new Tensor(std::move(tensor));
  py::capsule owner(owned, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(py::dtype(numpy_type), shape, owned->mutable_data(), owner);
}

std::string OnnxTypeString(const ValueInfo& value) {
  std::string type = "tensor(" + OnnxTypeName(value.dtype) + ")";
  if (value.kind == ValueKind::kSequence) type = "seq(" + type + ")";
  return value.optional ? "optional(" + type + ")" : type;
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
