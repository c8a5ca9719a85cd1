// ONNX TensorProto files (the ONNX test data format: input_0.pb, ...), read through the compiler's
// TensorProto decoder (src/compile/onnx_tensor.h), which checks every value and size; this file
// adds only what is particular to a file: recognising one, and refusing external data (a tensor
// file has no model folder for it to be relative to).

#include <onnx/onnx_pb.h>

#include <climits>
#include <memory>
#include <string>
#include <string_view>

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
  auto no_external =
      compile::ExternalDataFiles::Refusing("tensor files with external data are not supported");
  EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<compile::ConstantData> constant,
                         compile::ConstantFromTensorProto(proto, nullptr, no_external, where));
  return TensorFromBytes(where, constant->dtype, std::move(constant->shape), constant->bytes);
}

}  // namespace epctx
