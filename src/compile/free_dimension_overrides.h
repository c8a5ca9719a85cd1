// Symbolic dimensions fixed to a size before a model is compiled (epctx.free_dimension_overrides,
// `epctx compile -f NAME:SIZE`, ONNX Runtime's AddFreeDimensionOverrideByName). A transformer
// exported with a symbolic sequence length then compiles as one of fixed shapes: its activations
// get a planned arena faulted in ahead, and its kernels are made while the session is created
// instead of in its first run (BERT-base at batch 1, sequence 128 on a Zen 4, medians of 6
// alternating processes: creation + first inference 222 -> 218 ms at 1 thread, 122 -> 118 at 2;
// steady runs 2% faster at 1 thread).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "epctx/status.h"

namespace onnx {
class ModelProto;
}

namespace epctx::compile {

using FreeDimensionOverrides = std::map<std::string, int64_t>;

// Reads "NAME:SIZE[,NAME:SIZE...]" (sizes of 1 or more; a name given twice must have one size).
Result<FreeDimensionOverrides> ParseFreeDimensionOverrides(std::string_view text);

// Gives every dimension of the main graph's inputs named in `overrides` its size (shape
// inference then carries it through the graph). A name no input has is logged as a warning,
// naming `model_name`.
void ApplyFreeDimensionOverrides(onnx::ModelProto& model, const FreeDimensionOverrides& overrides,
                                 const std::string& model_name);

}  // namespace epctx::compile
