// Inference steps the schemas of opsets newer than Debian's onnx 1.12 share
// (onnx_newer_opsets.cc: changed signatures; onnx_opset18_operators.cc: new operators).
#pragma once

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace epctx::compile::newer_opsets {

// The inference function of `op`'s schema at `version` (onnx's own); an empty one when unknown.
onnx::InferenceFunction InferenceOf(const char* op, int version);

// The int32 or int64 values of input `n` when it is a constant; nullopt otherwise.
std::optional<std::vector<int64_t>> ConstantInts(onnx::InferenceContext& ctx, size_t n);

// Whether optional input `n` is given.
bool InputGiven(onnx::InferenceContext& ctx, size_t n);

// `axis` in [-rank, rank) as a dim index; fails the node otherwise.
int DimIndex(int64_t axis, int rank, const char* what);

}  // namespace epctx::compile::newer_opsets
