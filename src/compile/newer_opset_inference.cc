#include "compile/newer_opset_inference.h"

#include <onnx/defs/tensor_proto_util.h>

namespace epctx::compile::newer_opsets {

onnx::InferenceFunction InferenceOf(const char* op, int version) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op, version, "");
  return schema != nullptr ? schema->GetTypeAndShapeInferenceFunction() : onnx::InferenceFunction();
}

std::optional<std::vector<int64_t>> ConstantInts(onnx::InferenceContext& ctx, size_t n) {
  const onnx::TensorProto* t = n < ctx.getNumInputs() ? ctx.getInputData(n) : nullptr;
  if (t == nullptr || !t->external_data().empty()) return std::nullopt;
  if (t->data_type() == onnx::TensorProto::INT64) return onnx::ParseData<int64_t>(t);
  if (t->data_type() == onnx::TensorProto::INT32) {
    const std::vector<int32_t> narrow = onnx::ParseData<int32_t>(t);
    return std::vector<int64_t>(narrow.begin(), narrow.end());
  }
  return std::nullopt;
}

bool InputGiven(onnx::InferenceContext& ctx, size_t n) {
  return n < ctx.getNumInputs() && ctx.getInputType(n) != nullptr;
}

int DimIndex(int64_t axis, int rank, const char* what) {
  if (axis < -rank || axis >= rank) {
    fail_shape_inference(what, " ", axis, " is out of range for rank ", rank);
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace epctx::compile::newer_opsets
