#include "compile/onnx_tensor.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include "util/bool_values.h"
#include "util/overflow.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

Result<DataType> CheckedDataType(const onnx::TensorProto& proto, const std::string& where) {
  int32_t data_type = proto.data_type();
  switch (static_cast<DataType>(data_type)) {
    case DataType::kFloat32:
    case DataType::kUint8:
    case DataType::kInt8:
    case DataType::kUint16:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kBool:
    case DataType::kFloat16:
    case DataType::kFloat64:
    case DataType::kUint32:
    case DataType::kUint64:
    case DataType::kBFloat16:
      return static_cast<DataType>(data_type);
    case DataType::kUndefined:
      return EPCTX_ERROR(kCorrupt, "{}: TensorProto has no data_type", where);
    case DataType::kString:
      return EPCTX_ERROR(kUnsupported,
                         "{}: a string tensor cannot be a weight (string initializers and "
                         "Constant nodes are supported, as StringConstant nodes; string tensor "
                         "attributes are not)",
                         where);
  }
  std::string name = onnx::TensorProto_DataType_IsValid(data_type)
                         ? onnx::TensorProto_DataType_Name(data_type)
                         : std::string("unknown");
  return EPCTX_ERROR(kUnsupported, "{}: data_type {} ({}) is not supported", where, name,
                     data_type);
}

// The name of the typed field that holds values of `dtype` (ONNX's onnx.proto comments).
const char* TypedFieldFor(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
      return "float_data";
    case DataType::kFloat64:
      return "double_data";
    case DataType::kInt64:
      return "int64_data";
    case DataType::kUint32:
    case DataType::kUint64:
      return "uint64_data";
    default:
      return "int32_data";
  }
}

// Number of values in the TensorProto field called `field`.
int64_t FieldSize(const onnx::TensorProto& proto, std::string_view field) {
  if (field == "float_data") return proto.float_data_size();
  if (field == "int32_data") return proto.int32_data_size();
  if (field == "int64_data") return proto.int64_data_size();
  if (field == "double_data") return proto.double_data_size();
  if (field == "uint64_data") return proto.uint64_data_size();
  if (field == "string_data") return proto.string_data_size();
  return 0;
}

constexpr std::string_view kTypedFields[] = {"float_data",  "int32_data",  "int64_data",
                                             "double_data", "uint64_data", "string_data"};
constexpr std::string_view kExternal = "external data";
constexpr std::string_view kRaw = "raw_data";

bool IsExternal(const onnx::TensorProto& proto) {
  return proto.data_location() == onnx::TensorProto_DataLocation_EXTERNAL ||
         proto.external_data_size() > 0;
}

// Copies the repeated field `values` into `out` as `Dst`, checking each value lies in [lo, hi].
template <typename Dst, typename Src>
Status CopyTypedValues(const std::string& where, const char* field,
                       const google::protobuf::RepeatedField<Src>& values, std::byte* out, Src lo,
                       Src hi, DataType dtype) {
  for (int i = 0; i < values.size(); ++i) {
    Src v = values.Get(i);
    if (v < lo || v > hi) {
      return EPCTX_ERROR(kCorrupt, "{}: {}[{}] = {} is out of range for {}", where, field, i, v,
                         DataTypeName(dtype));
    }
    Dst d = static_cast<Dst>(v);
    std::memcpy(out + static_cast<size_t>(i) * sizeof d, &d, sizeof d);
  }
  return Status::Ok();
}

// Types whose typed field holds exactly their bytes.
template <typename T>
void CopyExact(const google::protobuf::RepeatedField<T>& values, std::byte* out) {
  if (!values.empty()) std::memcpy(out, values.data(), values.size() * sizeof(T));
}

// `out` has room for every value of the typed field of `dtype`.
Status CopyFromTypedField(const std::string& where, const onnx::TensorProto& proto, DataType dtype,
                          std::byte* out) {
  const char* field = TypedFieldFor(dtype);
  switch (dtype) {
    case DataType::kFloat32:
      CopyExact(proto.float_data(), out);
      return Status::Ok();
    case DataType::kFloat64:
      CopyExact(proto.double_data(), out);
      return Status::Ok();
    case DataType::kInt64:
      CopyExact(proto.int64_data(), out);
      return Status::Ok();
    case DataType::kUint64:
      CopyExact(proto.uint64_data(), out);
      return Status::Ok();
    case DataType::kInt32:
      CopyExact(proto.int32_data(), out);
      return Status::Ok();
    case DataType::kUint32:
      return CopyTypedValues<uint32_t, uint64_t>(where, field, proto.uint64_data(), out, 0,
                                                 UINT32_MAX, dtype);
    case DataType::kInt16:
      return CopyTypedValues<int16_t, int32_t>(where, field, proto.int32_data(), out, INT16_MIN,
                                               INT16_MAX, dtype);
    case DataType::kInt8:
      return CopyTypedValues<int8_t, int32_t>(where, field, proto.int32_data(), out, INT8_MIN,
                                              INT8_MAX, dtype);
    case DataType::kUint8:
    case DataType::kBool:
      // Bools are 0 or 1; anything else is not a bool.
      return CopyTypedValues<uint8_t, int32_t>(where, field, proto.int32_data(), out, 0,
                                               dtype == DataType::kBool ? 1 : UINT8_MAX, dtype);
    case DataType::kUint16:
    case DataType::kFloat16:
    case DataType::kBFloat16:
      // 16-bit floats are stored as their bit patterns, zero-extended.
      return CopyTypedValues<uint16_t, int32_t>(where, field, proto.int32_data(), out, 0,
                                                UINT16_MAX, dtype);
    case DataType::kUndefined:
    case DataType::kString:
      break;
  }
  return EPCTX_ERROR(kInternal, "{}: no typed field for {}", where, DataTypeName(dtype));
}

// A decimal number, nothing else (no sign, no spaces).
bool ParseUint64(const std::string& text, uint64_t* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return !text.empty() && ec == std::errc() && ptr == end;
}

// The bytes of an external tensor: location, offset and length from `external_data`.
Result<std::span<const std::byte>> ExternalBytes(const onnx::TensorProto& proto,
                                                 ExternalDataFiles& external,
                                                 const std::string& where,
                                                 std::shared_ptr<const MappedFile>* file) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto& kv : proto.external_data()) {
    const std::string& key = kv.key();
    if (key == "location") {
      location = kv.value();
      continue;
    }
    if (key != "offset" && key != "length") continue;  // "checksum" is not needed to read
    uint64_t number = 0;
    if (!ParseUint64(kv.value(), &number)) {
      return EPCTX_ERROR(kCorrupt, "{}: external data field '{}' is not a number: '{}'", where, key,
                         kv.value());
    }
    if (key == "offset") {
      offset = number;
    } else {
      length = number;
    }
  }
  if (location.empty()) {
    return EPCTX_ERROR(kCorrupt, "{}: external data without a location", where);
  }
  auto view = external.View(location, offset, length, file);
  if (!view.ok()) return Status(view.status().code(), where + ": " + view.status().message());
  return view;
}

}  // namespace

ExternalDataFiles ExternalDataFiles::Refusing(std::string reason) {
  ExternalDataFiles files("");
  files.refusal_ = std::move(reason);
  return files;
}

Result<std::span<const std::byte>> ExternalDataFiles::View(
    const std::string& location, uint64_t offset, std::optional<uint64_t> length,
    std::shared_ptr<const MappedFile>* file) {
  if (!refusal_.empty()) {
    return EPCTX_ERROR(kUnsupported, "data is stored externally (location '{}'); {}", location,
                       refusal_);
  }
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
  // A symlink may not lead out of the folder (a model archive's link to a file of the user's
  // would put that file's bytes into the blob), except into the model file's own real folder.
  if (it == files_.end() && !ResolvesInside(path, model_dir_) &&
      (real_model_dir_.empty() || !ResolvesInside(path, real_model_dir_))) {
    return EPCTX_ERROR(kInvalidArgument,
                       "external data location '{}' leads out of the model's directory through "
                       "a symbolic link (to '{}')",
                       location, std::filesystem::weakly_canonical(path).string());
  }
  if (it == files_.end()) {
    EPCTX_ASSIGN_OR_RETURN(MappedFile file, MappedFile::Open(path));
    it = files_.emplace(path, std::make_shared<MappedFile>(std::move(file))).first;
    opened_.emplace(location, it->second);
  }
  std::span<const std::byte> all = it->second->bytes();
  uint64_t size = length.has_value() ? *length : (offset <= all.size() ? all.size() - offset : 0);
  if (!RangeInside(offset, size, all.size())) {
    return EPCTX_ERROR(kCorrupt,
                       "external data '{}': {} bytes at offset {} exceed the file size {}", path,
                       size, offset, all.size());
  }
  *file = it->second;
  return all.subspan(offset, size);
}

void ExternalDataFiles::AllowRealFolderOf(const std::string& model_file) {
  std::error_code ec;
  const auto real = std::filesystem::canonical(model_file, ec);
  if (!ec) real_model_dir_ = real.parent_path().string();
}

void ExternalDataFiles::Adopt(const std::string& location, std::shared_ptr<const MappedFile> file) {
  files_[JoinPath(model_dir_, location)] = std::move(file);
}

Result<std::shared_ptr<ConstantData>> ConstantFromTensorProto(const onnx::TensorProto& proto,
                                                              std::shared_ptr<const void> owner,
                                                              ExternalDataFiles& external,
                                                              const std::string& where) {
  EPCTX_ASSIGN_OR_RETURN(DataType dtype, CheckedDataType(proto, where));
  if (proto.has_segment()) {
    return EPCTX_ERROR(kUnsupported, "{}: segmented tensors are not supported", where);
  }
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape) {
    if (d < 0) {
      return EPCTX_ERROR(kCorrupt, "{}: dims {} has a negative dimension", where,
                         ShapeToString(shape));
    }
  }
  uint64_t byte_size = 0;
  if (!CheckedByteSize(shape, DataTypeSize(dtype), &byte_size)) {
    return EPCTX_ERROR(kCorrupt, "{}: shape {} of {} is too large", where, ShapeToString(shape),
                       DataTypeName(dtype));
  }
  int64_t count = CheckedElementCount(shape).value();

  // Exactly one place may hold the values: external data, raw_data or the typed field of the
  // data type.
  std::vector<std::string_view> present;
  if (IsExternal(proto)) present.push_back(kExternal);
  if (proto.has_raw_data()) present.push_back(kRaw);
  for (std::string_view field : kTypedFields) {
    if (FieldSize(proto, field) > 0) present.push_back(field);
  }
  if (present.size() > 1) {
    return EPCTX_ERROR(kCorrupt, "{}: values are given twice, in {} and in {}", where, present[0],
                       present[1]);
  }
  const char* typed_field = TypedFieldFor(dtype);
  if (present.empty()) {
    if (count != 0) {
      return EPCTX_ERROR(kCorrupt, "{}: no values (neither raw_data nor {}) for shape {}", where,
                         typed_field, ShapeToString(shape));
    }
    return ConstantData::FromVector<std::byte>(dtype, std::move(shape), {});
  }

  auto c = std::make_shared<ConstantData>();
  c->dtype = dtype;
  if (present[0] == kExternal || present[0] == kRaw) {
    if (present[0] == kExternal) {
      std::shared_ptr<const MappedFile> file;
      EPCTX_ASSIGN_OR_RETURN(c->bytes, ExternalBytes(proto, external, where, &file));
      c->file = file.get();
      c->owner = std::move(file);
    } else {
      c->bytes = std::as_bytes(std::span(proto.raw_data().data(), proto.raw_data().size()));
      c->owner = std::move(owner);
    }
    if (c->bytes.size() != byte_size) {
      return EPCTX_ERROR(kCorrupt, "{}: {} has {} bytes; shape {} of {} needs {}", where,
                         present[0], c->bytes.size(), ShapeToString(shape), DataTypeName(dtype),
                         byte_size);
    }
    // As int32_data's values are checked below: a bool byte other than 0 or 1 is not a bool.
    if (dtype == DataType::kBool) {
      if (std::optional<size_t> bad = FirstNonBoolByte(c->bytes)) {
        return EPCTX_ERROR(kCorrupt, "{}: {}[{}] = {} is out of range for bool", where, present[0],
                           *bad, static_cast<int>(c->bytes[*bad]));
      }
    }
    c->shape = std::move(shape);
    return c;
  }

  if (present[0] != typed_field) {
    return EPCTX_ERROR(kCorrupt, "{}: values of data_type {} belong in {} or raw_data, not in {}",
                       where, DataTypeName(dtype), typed_field, present[0]);
  }
  int64_t values = FieldSize(proto, typed_field);
  if (values != count) {
    return EPCTX_ERROR(kCorrupt, "{}: {} has {} values; shape {} needs {}", where, typed_field,
                       values, ShapeToString(shape), count);
  }
  // The typed field holds `count` values, so `byte_size` is a small multiple of bytes in memory.
  std::vector<std::byte> bytes(byte_size);
  EPCTX_RETURN_IF_ERROR(CopyFromTypedField(where, proto, dtype, bytes.data()));
  return ConstantData::FromVector<std::byte>(dtype, std::move(shape), std::move(bytes));
}

Result<Tensor> StringTensorFromProto(const onnx::TensorProto& proto, const std::string& where) {
  if (proto.data_type() != onnx::TensorProto_DataType_STRING) {
    return EPCTX_ERROR(kInternal, "{}: not a string tensor", where);
  }
  if (IsExternal(proto) || proto.has_raw_data()) {
    return EPCTX_ERROR(kCorrupt, "{}: string values belong in string_data, not in {}", where,
                       IsExternal(proto) ? kExternal : kRaw);
  }
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape) {
    if (d < 0) {
      return EPCTX_ERROR(kCorrupt, "{}: dims {} has a negative dimension", where,
                         ShapeToString(shape));
    }
  }
  auto count = CheckedElementCount(shape);
  if (!count.ok() || *count != proto.string_data_size()) {
    return EPCTX_ERROR(kCorrupt, "{}: string_data has {} values; shape {} needs {}", where,
                       proto.string_data_size(), ShapeToString(shape),
                       count.ok() ? fmt::format("{}", *count) : std::string("too many"));
  }
  EPCTX_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(DataType::kString, std::move(shape)));
  std::copy(proto.string_data().begin(), proto.string_data().end(),
            t.mutable_data_as<std::string>());
  return t;
}

}  // namespace epctx::compile
