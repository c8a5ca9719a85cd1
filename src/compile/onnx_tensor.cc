#include "compile/onnx_tensor.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>

#include "util/overflow.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

template <typename Src, typename Dst>
std::shared_ptr<ConstantData> Convert(const google::protobuf::RepeatedField<Src>& field,
                                      DataType dtype, std::vector<int64_t> shape) {
  std::vector<std::byte> bytes(static_cast<size_t>(field.size()) * sizeof(Dst));
  for (int i = 0; i < field.size(); ++i) {
    Dst v = static_cast<Dst>(field.Get(i));
    std::memcpy(bytes.data() + static_cast<size_t>(i) * sizeof(Dst), &v, sizeof(Dst));
  }
  return ConstantData::FromVector<std::byte>(dtype, std::move(shape), std::move(bytes));
}

Result<std::shared_ptr<ConstantData>> FromTypedFields(const onnx::TensorProto& p, DataType dtype,
                                                      std::vector<int64_t> shape) {
  switch (dtype) {
    case DataType::kFloat32:
      return Convert<float, float>(p.float_data(), dtype, std::move(shape));
    case DataType::kFloat64:
      return Convert<double, double>(p.double_data(), dtype, std::move(shape));
    case DataType::kInt64:
      return Convert<int64_t, int64_t>(p.int64_data(), dtype, std::move(shape));
    case DataType::kInt32:
      return Convert<int32_t, int32_t>(p.int32_data(), dtype, std::move(shape));
    case DataType::kInt16:
      return Convert<int32_t, int16_t>(p.int32_data(), dtype, std::move(shape));
    case DataType::kInt8:
      return Convert<int32_t, int8_t>(p.int32_data(), dtype, std::move(shape));
    case DataType::kUint16:
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return Convert<int32_t, uint16_t>(p.int32_data(), dtype, std::move(shape));
    case DataType::kUint8:
    case DataType::kBool:
      return Convert<int32_t, uint8_t>(p.int32_data(), dtype, std::move(shape));
    case DataType::kUint32:
      return Convert<uint64_t, uint32_t>(p.uint64_data(), dtype, std::move(shape));
    case DataType::kUint64:
      return Convert<uint64_t, uint64_t>(p.uint64_data(), dtype, std::move(shape));
    default:
      break;
  }
  return EPCTX_ERROR(kUnsupported, "tensors of type {} are not supported", DataTypeName(dtype));
}

}  // namespace

Result<std::span<const std::byte>> ExternalDataFiles::View(const std::string& location,
                                                           uint64_t offset,
                                                           std::optional<uint64_t> length,
                                                           std::shared_ptr<const void>* owner) {
  if (model_dir_.empty()) {
    return EPCTX_ERROR(kInvalidArgument,
                       "external data '{}' cannot be resolved for a model without a directory",
                       location);
  }
  if (!StaysInsideFolder(location)) {
    return EPCTX_ERROR(kInvalidArgument,
                       "external data location '{}' must be a relative path inside the model's "
                       "directory",
                       location);
  }
  std::string path = JoinPath(model_dir_, location);
  auto it = files_.find(path);
  if (it == files_.end()) {
    EPCTX_ASSIGN_OR_RETURN(MappedFile file, MappedFile::Open(path));
    it = files_.emplace(path, std::make_shared<MappedFile>(std::move(file))).first;
  }
  std::span<const std::byte> all = it->second->bytes();
  uint64_t size = length.has_value() ? *length : (offset <= all.size() ? all.size() - offset : 0);
  if (!RangeInside(offset, size, all.size())) {
    return EPCTX_ERROR(kCorrupt,
                       "external data '{}': {} bytes at offset {} exceed the file size {}", path,
                       size, offset, all.size());
  }
  *owner = it->second;
  return all.subspan(offset, size);
}

Result<std::shared_ptr<ConstantData>> ConstantFromTensorProto(const onnx::TensorProto& proto,
                                                              std::shared_ptr<const void> owner,
                                                              ExternalDataFiles* external,
                                                              const std::string& what) {
  auto dtype = static_cast<DataType>(proto.data_type());
  size_t elem = DataTypeSize(dtype);
  if (elem == 0) {
    return EPCTX_ERROR(kUnsupported, "{}: tensors of type {} are not supported", what,
                       DataTypeName(dtype));
  }
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  auto count = CheckedElementCount(shape);
  uint64_t expected = 0;
  if (!count.ok() || !CheckedMul(static_cast<uint64_t>(*count), elem, &expected)) {
    return EPCTX_ERROR(kCorrupt, "{}: invalid dims {}", what, ShapeToString(shape));
  }

  std::shared_ptr<ConstantData> c;
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    if (external == nullptr) {
      return EPCTX_ERROR(kInvalidArgument, "{}: external data is not allowed here", what);
    }
    std::string location;
    uint64_t offset = 0;
    std::optional<uint64_t> length;
    for (const auto& kv : proto.external_data()) {
      try {
        if (kv.key() == "location") location = kv.value();
        if (kv.key() == "offset") offset = std::stoull(kv.value());
        if (kv.key() == "length") length = std::stoull(kv.value());
      } catch (const std::exception&) {
        return EPCTX_ERROR(kCorrupt, "{}: external data field '{}' is not a number: '{}'", what,
                           kv.key(), kv.value());
      }
    }
    if (location.empty()) {
      return EPCTX_ERROR(kCorrupt, "{}: external data without a location", what);
    }
    c = std::make_shared<ConstantData>();
    auto view = external->View(location, offset, length, &c->owner);
    if (!view.ok()) {
      return Status(view.status().code(), what + ": " + view.status().message());
    }
    c->bytes = *view;
    c->dtype = dtype;
    c->shape = std::move(shape);
  } else if (proto.has_raw_data()) {
    c = std::make_shared<ConstantData>();
    c->bytes =
        std::as_bytes(std::span<const char>(proto.raw_data().data(), proto.raw_data().size()));
    c->owner = std::move(owner);
    c->dtype = dtype;
    c->shape = std::move(shape);
  } else {
    auto converted = FromTypedFields(proto, dtype, std::move(shape));
    if (!converted.ok()) {
      return Status(converted.status().code(), what + ": " + converted.status().message());
    }
    c = std::move(converted).value();
  }
  if (c->bytes.size() != expected) {
    return EPCTX_ERROR(kCorrupt, "{}: holds {} bytes, but dims {} of {} need {}", what,
                       c->bytes.size(), ShapeToString(c->shape), DataTypeName(dtype), expected);
  }
  return c;
}

}  // namespace epctx::compile
