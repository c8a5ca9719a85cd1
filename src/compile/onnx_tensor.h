// The one ONNX TensorProto decoder: initializers and tensor attributes of an imported model, and
// tensor files (src/io/). A TensorProto is untrusted input: the values must sit in exactly one
// place, their size must match the shape, every narrowing of a typed field is range-checked, and
// every message names where the tensor came from. Raw data is used in place (no copy); external
// data is read through a shared mapping of the data file.
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
  // Refuses all external data as unsupported, giving `reason` (e.g. where no folder is meant).
  static ExternalDataFiles Refusing(std::string reason);

  // `file` receives the mapping the view lies in (which keeps it alive).
  Result<std::span<const std::byte>> View(const std::string& location, uint64_t offset,
                                          std::optional<uint64_t> length,
                                          std::shared_ptr<const MappedFile>* file);
  // Uses `file`, mapped already, for `location` (the model file itself, whose large initializers
  // the import reads in place as external data: see onnx_weight_scan.h).
  void Adopt(const std::string& location, std::shared_ptr<const MappedFile> file);
  // Data may also lie in the folder `model_file` resolves to (its symlinks followed): a model
  // and its data linked into a folder from elsewhere, as the Hugging Face cache lays them out.
  void AllowRealFolderOf(const std::string& model_file);
  // The files opened through View (not those adopted), by location.
  const std::map<std::string, std::shared_ptr<const MappedFile>>& opened() const { return opened_; }

 private:
  std::string model_dir_;
  std::string real_model_dir_;  // empty: none besides model_dir_
  std::string refusal_;         // set: every View is refused with this reason
  std::map<std::string, std::shared_ptr<const MappedFile>> files_;
  std::map<std::string, std::shared_ptr<const MappedFile>> opened_;
};

// `owner` keeps `proto` (whose raw_data is viewed in place) alive. `where` names the tensor's
// origin at the start of every error message.
Result<std::shared_ptr<ConstantData>> ConstantFromTensorProto(const onnx::TensorProto& proto,
                                                              std::shared_ptr<const void> owner,
                                                              ExternalDataFiles& external,
                                                              const std::string& where);

// A string tensor (data_type STRING: the values in string_data, one byte string each). Only
// tensor files, run-time values and the compiler's StringConstant nodes hold strings; a string
// weight is refused.
Result<Tensor> StringTensorFromProto(const onnx::TensorProto& proto, const std::string& where);

}  // namespace epctx::compile
