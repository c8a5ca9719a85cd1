// What the conformance runner needs to know about a test's model.onnx, read with ONNX's protobuf:
// its graph input and output names (test data is matched to them by position), its op types, and
// the kinds of values it uses.
#pragma once

#include <string>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx::cli::conformance {

struct ModelInfo {
  std::vector<std::string> input_names;   // graph.input in order, initializer-backed ones included
  std::vector<std::string> output_names;  // graph.output in order
  // Their element types (kUndefined for values that are not tensors).
  std::vector<DataType> input_dtypes;
  std::vector<DataType> output_dtypes;
  // Which ONNX value file each holds: kTensor (TensorProto), kSequence (SequenceProto) or kNone
  // (OptionalProto).
  std::vector<ValueKind> input_files;
  std::vector<ValueKind> output_files;
  std::vector<std::string> op_types;  // distinct op types of the main graph, in order of use
  // A sequence, optional, map or sparse value, or a string tensor, anywhere in the model
  // (graph inputs, outputs, value infos and initializers, subgraphs included).
  bool non_tensor_types = false;
  // Every graph input, output and initializer is a float32, int32, int64 or bool tensor.
  bool core_types_only = false;
};

Result<ModelInfo> ReadModelInfo(const std::string& model_path);

}  // namespace epctx::cli::conformance
