#include "compile/contrib/schema_helpers.h"

#include <cstring>

#include "compile/onnx_tensor.h"

namespace epctx::compile::contrib {

void RegisterOne(onnx::OpSchema schema) {
  onnx::RegisterSchema(std::move(schema));
}

void PropagateTypeAndShape(onnx::InferenceContext& ctx, size_t input, size_t output) {
  if (ctx.getNumInputs() <= input || ctx.getInputType(input) == nullptr ||
      ctx.getNumOutputs() <= output) {
    return;
  }
  onnx::propagateElemTypeFromInputToOutput(ctx, input, output);
  if (onnx::hasInputShape(ctx, input)) onnx::propagateShapeFromInputToOutput(ctx, input, output);
}

void ShapeWithLastDim(onnx::InferenceContext& ctx, size_t input, size_t output, int64_t last) {
  if (!onnx::hasInputShape(ctx, input)) return;
  const onnx::TensorShapeProto& in = onnx::getInputShape(ctx, input);
  if (in.dim_size() == 0) fail_shape_inference("input ", input, " must have rank 1 or more");
  onnx::TensorShapeProto out = in;
  out.mutable_dim(out.dim_size() - 1)->clear_dim_param();
  out.mutable_dim(out.dim_size() - 1)->set_dim_value(last);
  onnx::updateOutputShape(ctx, output, out);
}

void InferEmbeddingShapes(onnx::InferenceContext& ctx, size_t words) {
  if (!onnx::hasInputShape(ctx, 0)) return;
  const onnx::TensorShapeProto& ids = onnx::getInputShape(ctx, 0);
  if (ids.dim_size() != 2) fail_shape_inference("input_ids must have rank 2 [batch, sequence]");
  onnx::TensorShapeProto out;
  *out.add_dim() = ids.dim(0);
  *out.add_dim() = ids.dim(1);
  onnx::TensorShapeProto::Dimension* hidden = out.add_dim();
  if (onnx::hasInputShape(ctx, words)) {
    const onnx::TensorShapeProto& table = onnx::getInputShape(ctx, words);
    if (table.dim_size() != 2) fail_shape_inference("the word embedding must have rank 2");
    *hidden = table.dim(1);
  }
  onnx::updateOutputShape(ctx, 0, out);
  if (ctx.getNumOutputs() > 2) onnx::updateOutputShape(ctx, 2, out);
  if (ctx.getNumOutputs() > 1) {
    onnx::TensorShapeProto index;
    *index.add_dim() = ids.dim(0);
    onnx::updateOutputShape(ctx, 1, index);
  }
}

std::optional<int64_t> ConstantIntInput(onnx::InferenceContext& ctx, size_t input) {
  if (ctx.getNumInputs() <= input) return std::nullopt;
  const onnx::TensorProto* t = ctx.getInputData(input);
  if (t == nullptr) return std::nullopt;
  auto no_external = ExternalDataFiles::Refusing("shape inference reads no external data");
  auto c = ConstantFromTensorProto(*t, nullptr, no_external, "");
  if (!c.ok()) return std::nullopt;
  const ConstantData& data = **c;
  if (data.dtype == DataType::kInt64 && data.bytes.size() == sizeof(int64_t)) {
    int64_t v;
    std::memcpy(&v, data.bytes.data(), sizeof v);
    return v;
  }
  if (data.dtype == DataType::kInt32 && data.bytes.size() == sizeof(int32_t)) {
    int32_t v;
    std::memcpy(&v, data.bytes.data(), sizeof v);
    return v;
  }
  return std::nullopt;
}

std::optional<std::vector<int64_t>> StaticDims(const onnx::FunctionBodyBuildContext& ctx, int i) {
  const onnx::TypeProto* t = ctx.getInputType(i);
  if (t == nullptr || !t->has_tensor_type() || !t->tensor_type().has_shape()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : t->tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return dims;
}

int RankOf(const onnx::FunctionBodyBuildContext& ctx, int i) {
  const onnx::TypeProto* t = ctx.getInputType(i);
  if (t == nullptr || !t->has_tensor_type() || !t->tensor_type().has_shape()) return -1;
  return t->tensor_type().shape().dim_size();
}

bool IsFloat32(const onnx::FunctionBodyBuildContext& ctx, int i) {
  const onnx::TypeProto* t = ctx.getInputType(i);
  return t != nullptr && t->has_tensor_type() &&
         t->tensor_type().elem_type() == onnx::TensorProto::FLOAT;
}

int64_t IntAttribute(const onnx::FunctionBodyBuildContext& ctx, const char* name,
                     int64_t fallback) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  return a != nullptr && a->type() == onnx::AttributeProto::INT ? a->i() : fallback;
}

float FloatAttribute(const onnx::FunctionBodyBuildContext& ctx, const char* name, float fallback) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  return a != nullptr && a->type() == onnx::AttributeProto::FLOAT ? a->f() : fallback;
}

onnx::TensorProto Int64s(std::vector<int64_t> values, bool scalar) {
  onnx::TensorProto t = onnx::ToTensor(values);
  if (!scalar) t.add_dims(static_cast<int64_t>(values.size()));
  return t;
}

}  // namespace epctx::compile::contrib
