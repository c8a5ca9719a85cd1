#include "run_inputs.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <string_view>

#include "epctx/tensor_io.h"
#include "util/status_macros.h"

namespace epctx::cli {
namespace {

std::string ExpectedInputList(const std::vector<ValueInfo>& expected) {
  if (expected.empty()) return "the model has no inputs";
  std::string out = "the model's inputs are:";
  for (const ValueInfo& value : expected) out += "\n  " + DescribeValue(value);
  return out;
}

const ValueInfo* FindInput(const std::vector<ValueInfo>& expected, std::string_view name) {
  for (const ValueInfo& value : expected) {
    if (value.name == name) return &value;
  }
  return nullptr;
}

struct InputArg {
  const ValueInfo* input;
  std::string file;
};

// Splits NAME=FILE at the first '=' that ends a model input's name.
Result<InputArg> SplitInputArg(const std::vector<ValueInfo>& expected, const std::string& arg) {
  for (size_t eq = arg.find('='); eq != std::string::npos; eq = arg.find('=', eq + 1)) {
    if (const ValueInfo* input = FindInput(expected, std::string_view(arg).substr(0, eq))) {
      return InputArg{input, arg.substr(eq + 1)};
    }
  }
  return EPCTX_ERROR(kNotFound, "--input '{}': '{}' is not an input of the model; {}", arg,
                     arg.substr(0, arg.find('=')), ExpectedInputList(expected));
}

// A sequence input comes from an ONNX SequenceProto file (as ONNX's test data stores one); a
// tensor input from a .npy or TensorProto .pb file.
Result<Tensor> ReadInputFile(const ValueInfo& info, const std::string& file) {
  if (info.kind != ValueKind::kSequence) return ReadTensorFile(file);
  std::string extension = std::filesystem::path(file).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (extension != ".pb") {
    return EPCTX_ERROR(kInvalidArgument,
                       "input '{}' is a sequence: give it as an ONNX SequenceProto .pb file, not "
                       "'{}'",
                       info.name, file);
  }
  return ReadValueProto(file, ValueKind::kSequence);
}

}  // namespace

std::string DescribeValue(const ValueInfo& value) {
  std::string type = value.kind == ValueKind::kSequence
                         ? fmt::format("sequence of {}", DataTypeName(value.dtype))
                         : fmt::format("{} {}", DataTypeName(value.dtype), ShapeToString(value));
  return fmt::format("{}: {}{}", value.name, value.optional ? "optional " : "", type);
}

Result<std::unordered_map<std::string, Tensor>> LoadInputs(const std::vector<ValueInfo>& expected,
                                                           const std::vector<std::string>& args) {
  std::unordered_map<std::string, Tensor> inputs;
  for (const std::string& arg : args) {
    EPCTX_ASSIGN_OR_RETURN(InputArg input, SplitInputArg(expected, arg));
    const ValueInfo& info = *input.input;
    if (inputs.contains(info.name)) {
      return EPCTX_ERROR(kInvalidArgument, "input '{}' is given twice", info.name);
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor tensor, ReadInputFile(info, input.file));
    // The session's own rule, checked here to name the file.
    EPCTX_RETURN_IF_ERROR(
        CheckInput(info, tensor, fmt::format("input '{}' from '{}'", info.name, input.file)));
    inputs.emplace(info.name, std::move(tensor));
  }
  std::vector<std::string> missing;
  for (const ValueInfo& value : expected) {
    if (inputs.contains(value.name)) continue;
    if (value.optional) {
      inputs.emplace(value.name, Tensor::None(value.dtype, value.kind));
    } else {
      missing.push_back("'" + value.name + "'");
    }
  }
  if (!missing.empty()) {
    return EPCTX_ERROR(kInvalidArgument,
                       "missing {} {}; give each as --input NAME=FILE (.npy or .pb); {}",
                       missing.size() == 1 ? "input" : "inputs", fmt::join(missing, ", "),
                       ExpectedInputList(expected));
  }
  return inputs;
}

}  // namespace epctx::cli
