// The `--input NAME=FILE` arguments of `epctx run`, turned into the tensors Session::Run takes and
// checked against the model's inputs, so that a mistake is reported with the file it came from.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "epctx/session.h"
#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx::cli {

// "input: float32 [batch,3,224,224]": unknown dims show their symbolic name, or "?";
// "s: sequence of float32", "o: optional float32 [2]".
std::string DescribeValue(const ValueInfo& value);

// Each argument is NAME=FILE; NAME is matched against the model's input names (so a name may itself
// contain '='). Every model input must be given exactly once, with the declared dtype and dims,
// except an optional input, which when not given is passed as an empty optional. A sequence input
// is read from an ONNX SequenceProto .pb file.
Result<std::unordered_map<std::string, Tensor>> LoadInputs(const std::vector<ValueInfo>& expected,
                                                           const std::vector<std::string>& args);

}  // namespace epctx::cli
