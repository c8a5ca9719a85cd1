// ONNX TensorProto files (the ONNX test data format: input_0.pb, ...), read through the compiler's
// TensorProto decoder (src/compile/onnx_tensor.h), which checks every value and size; this file
// adds only what is particular to a file: recognising one, and refusing external data (a tensor
// file has no model folder for it to be relative to).

#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>

#include <climits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compile/onnx_tensor.h"
#include "epctx/tensor_io.h"
#include "io/tensor_parse.h"
#include "util/file.h"
#include "util/status_macros.h"

namespace epctx {

Result<Tensor> ReadTensorProto(const std::string& path) {
  EPCTX_ASSIGN_OR_RETURN(std::string file, ReadWholeFile(path));
  return io::ParseTensorProto(file, path);
}

Result<Tensor> io::ParseTensorProto(std::string_view file, const std::string& path) {
  onnx::TensorProto proto;
  if (file.size() > static_cast<size_t>(INT_MAX) ||
      !proto.ParseFromArray(file.data(), static_cast<int>(file.size()))) {
    return EPCTX_ERROR(kCorrupt,
                       "'{}': not a serialized ONNX TensorProto (protobuf parsing failed)", path);
  }
  std::string where = proto.name().empty() ? fmt::format("'{}'", path)
                                           : fmt::format("'{}' (tensor '{}')", path, proto.name());
  // Protobuf reads most short byte strings as some message: without a data_type this is likely
  // another kind of file.
  if (proto.data_type() == onnx::TensorProto_DataType_UNDEFINED) {
    return EPCTX_ERROR(kCorrupt, "{}: TensorProto has no data_type (is this a TensorProto file?)",
                       where);
  }
  if (proto.data_type() == onnx::TensorProto_DataType_STRING) {
    return compile::StringTensorFromProto(proto, where);
  }
  auto no_external =
      compile::ExternalDataFiles::Refusing("tensor files with external data are not supported");
  EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<compile::ConstantData> constant,
                         compile::ConstantFromTensorProto(proto, nullptr, no_external, where));
  return TensorFromBytes(where, constant->dtype, std::move(constant->shape), constant->bytes);
}

namespace {

// `name`: the file, as messages name it.
Result<Tensor> TensorOf(const onnx::TensorProto& proto, const std::string& name) {
  std::string bytes = proto.SerializeAsString();
  return io::ParseTensorProto(bytes, name);
}

Result<Tensor> SequenceOf(const onnx::SequenceProto& proto, const std::string& name) {
  const std::string where = fmt::format("'{}'", name);
  if (proto.elem_type() != onnx::SequenceProto::TENSOR) {
    return EPCTX_ERROR(kUnsupported,
                       "{}: sequences of elem_type {} are not supported (only of tensors)", where,
                       static_cast<int>(proto.elem_type()));
  }
  std::vector<Tensor> elements;
  DataType type = DataType::kUndefined;
  for (int i = 0; i < proto.tensor_values_size(); ++i) {
    EPCTX_ASSIGN_OR_RETURN(Tensor t,
                           TensorOf(proto.tensor_values(i), fmt::format("{} element {}", name, i)));
    if (i > 0 && t.dtype() != type) {
      return EPCTX_ERROR(kCorrupt, "{}: element {} is {}, element 0 is {}", where, i,
                         DataTypeName(t.dtype()), DataTypeName(type));
    }
    type = t.dtype();
    elements.push_back(std::move(t));
  }
  return Tensor::Sequence(type, std::move(elements));
}

}  // namespace

Result<Tensor> ReadValueProto(const std::string& path, ValueKind kind) {
  if (kind == ValueKind::kTensor) return ReadTensorProto(path);
  EPCTX_ASSIGN_OR_RETURN(std::string file, ReadWholeFile(path));
  const std::string where = fmt::format("'{}'", path);
  if (file.size() > static_cast<size_t>(INT_MAX)) {
    return EPCTX_ERROR(kCorrupt, "{}: file too large for a protobuf message", where);
  }
  if (kind == ValueKind::kSequence) {
    onnx::SequenceProto proto;
    if (!proto.ParseFromArray(file.data(), static_cast<int>(file.size()))) {
      return EPCTX_ERROR(kCorrupt, "{}: not a serialized ONNX SequenceProto", where);
    }
    return SequenceOf(proto, path);
  }
  onnx::OptionalProto proto;
  if (!proto.ParseFromArray(file.data(), static_cast<int>(file.size()))) {
    return EPCTX_ERROR(kCorrupt, "{}: not a serialized ONNX OptionalProto", where);
  }
  switch (proto.elem_type()) {
    case onnx::OptionalProto::TENSOR:
      if (proto.has_tensor_value()) return TensorOf(proto.tensor_value(), path);
      return Tensor::None(DataType::kUndefined, ValueKind::kTensor);
    case onnx::OptionalProto::SEQUENCE:
      if (proto.has_sequence_value()) return SequenceOf(proto.sequence_value(), path);
      return Tensor::None(DataType::kUndefined, ValueKind::kSequence);
    case onnx::OptionalProto::UNDEFINED:
      if (!proto.has_tensor_value() && !proto.has_sequence_value()) {
        return Tensor::None(DataType::kUndefined);
      }
      break;
    default:
      break;
  }
  return EPCTX_ERROR(kUnsupported, "{}: optional of elem_type {} is not supported", where,
                     static_cast<int>(proto.elem_type()));
}

}  // namespace epctx
