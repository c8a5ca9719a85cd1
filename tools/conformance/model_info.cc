#include "conformance/model_info.h"

#include <onnx/onnx_pb.h>

#include <algorithm>

#include "util/file.h"
#include "util/status_macros.h"

namespace epctx::cli::conformance {
namespace {

bool IsCoreElemType(int32_t elem_type) {
  return elem_type == onnx::TensorProto::FLOAT || elem_type == onnx::TensorProto::INT32 ||
         elem_type == onnx::TensorProto::INT64 || elem_type == onnx::TensorProto::BOOL;
}

bool IsPlainTensor(const onnx::TypeProto& type) {
  return type.value_case() == onnx::TypeProto::kTensorType &&
         type.tensor_type().elem_type() != onnx::TensorProto::STRING;
}

bool IsCoreTensor(const onnx::TypeProto& type) {
  return type.value_case() == onnx::TypeProto::kTensorType &&
         IsCoreElemType(type.tensor_type().elem_type());
}

// True when `graph` or one of its subgraphs uses a value that is not a plain numeric tensor.
bool UsesNonTensorTypes(const onnx::GraphProto& graph) {
  auto non_tensor = [](const onnx::ValueInfoProto& v) {
    return v.has_type() && !IsPlainTensor(v.type());
  };
  if (std::any_of(graph.input().begin(), graph.input().end(), non_tensor) ||
      std::any_of(graph.output().begin(), graph.output().end(), non_tensor) ||
      std::any_of(graph.value_info().begin(), graph.value_info().end(), non_tensor) ||
      graph.sparse_initializer_size() > 0) {
    return true;
  }
  for (const onnx::TensorProto& init : graph.initializer()) {
    if (init.data_type() == onnx::TensorProto::STRING) return true;
  }
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_sparse_tensor() || attr.sparse_tensors_size() > 0) return true;
      if (attr.has_t() && attr.t().data_type() == onnx::TensorProto::STRING) return true;
      if (attr.has_tp() || attr.type_protos_size() > 0) return true;
      if (attr.has_g() && UsesNonTensorTypes(attr.g())) return true;
      for (const onnx::GraphProto& g : attr.graphs()) {
        if (UsesNonTensorTypes(g)) return true;
      }
    }
  }
  return false;
}

bool UsesOnlyCoreTypes(const onnx::GraphProto& graph) {
  auto core = [](const onnx::ValueInfoProto& v) { return v.has_type() && IsCoreTensor(v.type()); };
  return std::all_of(graph.input().begin(), graph.input().end(), core) &&
         std::all_of(graph.output().begin(), graph.output().end(), core) &&
         std::all_of(graph.initializer().begin(), graph.initializer().end(),
                     [](const onnx::TensorProto& t) { return IsCoreElemType(t.data_type()); });
}

DataType DtypeOf(const onnx::ValueInfoProto& v) {
  if (v.type().value_case() != onnx::TypeProto::kTensorType) return DataType::kUndefined;
  return static_cast<DataType>(v.type().tensor_type().elem_type());
}

ValueKind FileKindOf(const onnx::ValueInfoProto& v) {
  switch (v.type().value_case()) {
    case onnx::TypeProto::kSequenceType:
      return ValueKind::kSequence;
    case onnx::TypeProto::kOptionalType:
      return ValueKind::kNone;
    default:
      return ValueKind::kTensor;
  }
}

}  // namespace

Result<ModelInfo> ReadModelInfo(const std::string& model_path) {
  EPCTX_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(model_path));
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    return EPCTX_ERROR(kCorrupt, "'{}': not a valid ONNX ModelProto", model_path);
  }
  const onnx::GraphProto& graph = model.graph();
  ModelInfo info;
  for (const onnx::ValueInfoProto& v : graph.input()) {
    info.input_names.push_back(v.name());
    info.input_dtypes.push_back(DtypeOf(v));
    info.input_files.push_back(FileKindOf(v));
  }
  for (const onnx::ValueInfoProto& v : graph.output()) {
    info.output_names.push_back(v.name());
    info.output_dtypes.push_back(DtypeOf(v));
    info.output_files.push_back(FileKindOf(v));
  }
  for (const onnx::NodeProto& node : graph.node()) {
    if (std::find(info.op_types.begin(), info.op_types.end(), node.op_type()) ==
        info.op_types.end()) {
      info.op_types.push_back(node.op_type());
    }
  }
  info.non_tensor_types = UsesNonTensorTypes(graph);
  info.core_types_only = UsesOnlyCoreTypes(graph);
  return info;
}

}  // namespace epctx::cli::conformance
