// What the contrib schema files share: registration of one schema, the few inference steps their
// functions are made of, and the readers of a node's context their function bodies are built
// from.
#pragma once

#include <onnx/defs/function.h>
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace epctx::compile::contrib {

// Registers `schema` (its name, domain and version set) with onnx's registry.
void RegisterOne(onnx::OpSchema schema);

// Output `output` takes input `input`'s element type and, when known, its shape.
void PropagateTypeAndShape(onnx::InferenceContext& ctx, size_t input, size_t output);

// The input's shape with its last dim replaced by `last` (a matrix product's output).
void ShapeWithLastDim(onnx::InferenceContext& ctx, size_t input, size_t output, int64_t last);

// The shapes of an embedding layer's outputs (EmbedLayerNormalization and its quantized form),
// from input_ids (input 0, [B, S]) and the word table (input `words`, [V, H]): outputs 0 and 2
// (when present) [B, S, H], output 1 [B]. Fails on input_ids of another rank.
void InferEmbeddingShapes(onnx::InferenceContext& ctx, size_t words);

// The value of input `input` when it is a one-element int32 or int64 constant (an initializer or
// Constant); nullopt otherwise (a graph input, or a tensor that does not decode).
std::optional<int64_t> ConstantIntInput(onnx::InferenceContext& ctx, size_t input);

// Function bodies (SetContextDependentFunctionBodyBuilder): what the node's context says.
// The static dims of input `i`, or nullopt when its rank or a dim is unknown.
std::optional<std::vector<int64_t>> StaticDims(const onnx::FunctionBodyBuildContext& ctx, int i);
// The rank of input `i`, or -1 when unknown.
int RankOf(const onnx::FunctionBodyBuildContext& ctx, int i);
// Whether input `i` is known to be a float32 tensor.
bool IsFloat32(const onnx::FunctionBodyBuildContext& ctx, int i);
int64_t IntAttribute(const onnx::FunctionBodyBuildContext& ctx, const char* name, int64_t fallback);
float FloatAttribute(const onnx::FunctionBodyBuildContext& ctx, const char* name, float fallback);
// An int64 tensor of `values`: a scalar (one value) or a 1-D tensor.
onnx::TensorProto Int64s(std::vector<int64_t> values, bool scalar);

}  // namespace epctx::compile::contrib
