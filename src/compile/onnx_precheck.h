// Checks of an original model made before onnx::checker and ONNX's shape inference see it. ONNX
// 1.12's C++ divides by some attributes without testing them (Conv or MaxPool strides of 0 stop
// the process with SIGFPE) and recurses through model-local functions without a bound (a
// function calling itself overflows the stack). A hostile model must get an error naming the
// node instead.
#pragma once

#include <string>

#include "epctx/status.h"

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace epctx::compile {

// Control-flow bodies nested deeper than this are refused (protobuf's parser, at its default
// recursion limit of 100 messages, refuses about 30 levels already).
inline constexpr int kMaxGraphNesting = 16;
// Model-local functions calling each other deeper than this are refused.
inline constexpr int kMaxFunctionCallDepth = 32;

// kInvalidArgument naming the node (or function) when the model has:
//  - a Conv, ConvInteger, QLinearConv, ConvTranspose, MaxPool, AveragePool, LpPool or MaxUnpool
//    with a stride, dilation or kernel dimension below 1 or above INT32_MAX;
//  - a DepthToSpace or SpaceToDepth with a blocksize below 1 or above INT32_MAX;
//  - bodies nested more than kMaxGraphNesting deep;
//  - model-local functions that call themselves, directly or through others, or call each other
//    more than kMaxFunctionCallDepth deep.
// Everything else is left to onnx::checker and the import.
Status PrecheckModel(const onnx::ModelProto& model, const std::string& name);

}  // namespace epctx::compile
