#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "epctx/tensor.h"
#include "util/overflow.h"
#include "util/status_macros.h"

namespace epctx {

size_t DataTypeSize(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return 4;
    case DataType::kUint8:
      return 1;
    case DataType::kInt8:
      return 1;
    case DataType::kUint16:
      return 2;
    case DataType::kInt16:
      return 2;
    case DataType::kInt32:
      return 4;
    case DataType::kInt64:
      return 8;
    case DataType::kBool:
      return 1;
    case DataType::kFloat16:
      return 2;
    case DataType::kFloat64:
      return 8;
    case DataType::kUint32:
      return 4;
    case DataType::kUint64:
      return 8;
    case DataType::kBFloat16:
      return 2;
    case DataType::kUndefined:
    case DataType::kString:
      return 0;
  }
  return 0;
}

std::string DataTypeName(DataType type) {
  switch (type) {
    case DataType::kUndefined:
      return "undefined";
    case DataType::kFloat32:
      return "float32";
    case DataType::kUint8:
      return "uint8";
    case DataType::kInt8:
      return "int8";
    case DataType::kUint16:
      return "uint16";
    case DataType::kInt16:
      return "int16";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt64:
      return "int64";
    case DataType::kString:
      return "string";
    case DataType::kBool:
      return "bool";
    case DataType::kFloat16:
      return "float16";
    case DataType::kFloat64:
      return "float64";
    case DataType::kUint32:
      return "uint32";
    case DataType::kUint64:
      return "uint64";
    case DataType::kBFloat16:
      return "bfloat16";
  }
  return fmt::format("unknown({})", static_cast<int>(type));
}

std::string_view ValueKindName(ValueKind kind) {
  switch (kind) {
    case ValueKind::kTensor:
      return "a tensor";
    case ValueKind::kSequence:
      return "a sequence";
    case ValueKind::kNone:
      return "an empty optional";
  }
  return "a value of unknown kind";
}

std::string ShapeToString(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ',';
    out += shape[i] < 0 ? "?" : std::to_string(shape[i]);
  }
  return out + "]";
}

Result<Tensor> Tensor::Allocate(DataType type, std::vector<int64_t> shape) {
  if (type == DataType::kString) {
    EPCTX_ASSIGN_OR_RETURN(int64_t count, CheckedElementCount(shape));
    // Each element is a std::string object; a bound on the count keeps a hostile shape from
    // asking for more than memory can hold.
    if (static_cast<uint64_t>(count) > (uint64_t{1} << 40) / sizeof(std::string)) {
      return EPCTX_ERROR(kInvalidArgument, "string tensor of shape {} is too large",
                         ShapeToString(shape));
    }
    auto strings =
        std::shared_ptr<std::string[]>(new (std::nothrow) std::string[static_cast<size_t>(count)]);
    if (strings == nullptr) {
      return EPCTX_ERROR(kInternal, "out of memory allocating {} strings", count);
    }
    const void* data = strings.get();
    return Tensor(type, std::move(shape), count, data, std::shared_ptr<const void>(strings, data));
  }
  size_t elem = DataTypeSize(type);
  if (elem == 0) {
    return EPCTX_ERROR(kUnsupported, "cannot allocate a tensor of type {}", DataTypeName(type));
  }
  EPCTX_ASSIGN_OR_RETURN(int64_t count, CheckedElementCount(shape));
  uint64_t bytes = 0;
  if (!CheckedMul(static_cast<uint64_t>(count), elem, &bytes) ||
      bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - 64) {
    return EPCTX_ERROR(kInvalidArgument, "tensor of shape {} and type {} is too large",
                       ShapeToString(shape), DataTypeName(type));
  }
  size_t rounded = static_cast<size_t>((bytes + 63) / 64 * 64);
  if (rounded == 0) rounded = 64;
  void* p = std::aligned_alloc(64, rounded);
  if (p == nullptr) {
    return EPCTX_ERROR(kInternal, "out of memory allocating {} bytes", rounded);
  }
  std::shared_ptr<const void> owner(p, [](const void* q) { std::free(const_cast<void*>(q)); });
  return Tensor(type, std::move(shape), count, p, std::move(owner));
}

Tensor Tensor::View(DataType type, std::vector<int64_t> shape, const void* data,
                    std::shared_ptr<const void> owner) {
  // Exact, as Allocate's: [2^32, 2^32, 0] holds no element (a run may make it: the frame places
  // such an output in its arena slot), and multiplying the dims in order would overflow first.
  int64_t count = 0;
  if (!ExactDimProduct(shape, &count)) return Tensor();
  return Tensor(type, std::move(shape), count, data, std::move(owner));
}

Tensor Tensor::Sequence(DataType element_type, std::vector<Tensor> elements) {
  Tensor t;
  t.kind_ = ValueKind::kSequence;
  t.dtype_ = element_type;
  t.elements_ = std::make_shared<const std::vector<Tensor>>(std::move(elements));
  return t;
}

Tensor Tensor::None(DataType element_type, ValueKind of) {
  Tensor t;
  t.kind_ = ValueKind::kNone;
  t.none_of_ = of;
  t.dtype_ = element_type;
  return t;
}

const std::vector<Tensor>& Tensor::elements() const {
  static const std::vector<Tensor> kNoElements;
  return elements_ != nullptr ? *elements_ : kNoElements;
}

Result<Tensor> Tensor::Clone() const {
  switch (kind_) {
    case ValueKind::kNone:
      return *this;
    case ValueKind::kSequence: {
      std::vector<Tensor> copies;
      copies.reserve(elements().size());
      for (const Tensor& e : elements()) {
        EPCTX_ASSIGN_OR_RETURN(Tensor c, e.Clone());
        copies.push_back(std::move(c));
      }
      return Sequence(dtype_, std::move(copies));
    }
    case ValueKind::kTensor:
      break;
  }
  if (empty()) return Tensor();
  EPCTX_ASSIGN_OR_RETURN(Tensor copy, Allocate(dtype_, shape_));
  if (dtype_ == DataType::kString) {
    std::copy_n(data_as<std::string>(), element_count_, copy.mutable_data_as<std::string>());
  } else if (byte_size() > 0) {
    std::memcpy(copy.mutable_data(), data_, byte_size());
  }
  return copy;
}

Tensor Tensor::Reshaped(std::vector<int64_t> shape) const {
  int64_t count = 0;
  for (int64_t d : shape) {
    if (d < 0) return Tensor();
  }
  if (!ExactDimProduct(shape, &count) || count != element_count_) return Tensor();
  return Tensor(dtype_, std::move(shape), count, data_, owner_);
}

}  // namespace epctx
