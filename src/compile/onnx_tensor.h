// ONNX TensorProto -> ConstantData, with raw data used in place (no copy) and external data
// read through a shared mapping of the data file.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "compile/ir.h"
#include "epctx/status.h"
#include "util/file.h"

namespace onnx {
class TensorProto;
}

namespace epctx::compile {

// Maps each external data file once and hands out bounds-checked views of it.
class ExternalDataFiles {
 public:
  // `model_dir`: the directory locations are relative to; empty means external data is refused
  // (a model loaded from memory without a path).
  explicit ExternalDataFiles(std::string model_dir) : model_dir_(std::move(model_dir)) {}
  Result<std::span<const std::byte>> View(const std::string& location, uint64_t offset,
                                          std::optional<uint64_t> length,
                                          std::shared_ptr<const void>* owner);

 private:
  std::string model_dir_;
  std::map<std::string, std::shared_ptr<MappedFile>> files_;
};

// `owner` keeps `proto` (whose raw_data may be viewed in place) alive. `what` names the tensor's
// origin in error messages.
Result<std::shared_ptr<ConstantData>> ConstantFromTensorProto(const onnx::TensorProto& proto,
                                                              std::shared_ptr<const void> owner,
                                                              ExternalDataFiles* external,
                                                              const std::string& what);

}  // namespace epctx::compile
