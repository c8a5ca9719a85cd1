// Compiling original models into context models and blobs: the work behind the public
// ModelCompiler (which parses SessionOptions in the loader and calls these) and behind sessions
// created with ep.context_enable=1.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "compile/compile_model.h"
#include "compile/compile_options.h"
#include "epctx/compiler.h"
#include "epctx/status.h"

namespace epctx::compile {

// The original model of one compile: a file, or bytes from memory.
struct CompileInput {
  std::string path;  // empty when the model came from memory
  std::span<const std::byte> bytes;

  // With the options' import changes; `opts.external_data_folder` is where a model from
  // memory finds its external data files (ONNX Runtime's
  // session.model_external_initializers_file_folder_path), a file's own folder otherwise.
  Result<ImportedModel> Import(const CompileOptions& opts) const;
  // The model's name inside the blob: the file's stem, or for bytes the stem of where the context
  // model lives ("out/head_ctx.onnx" -> "head").
  std::string PartitionStem(const std::string& context_location) const;
};

// Where the context model goes: written to `location`, or returned as bytes (`location` is then
// ep.context_file_path, where the caller will save them; empty is fine with embed mode).
struct CompileOutput {
  std::string location;
  std::string* bytes = nullptr;
};

// One model: its context model and blob (or, with ep.share_ep_contexts, its place in the
// process's shared blob). ModelCompiler::CompileToFile and CompileToBytes.
// `reporter` (may be empty) follows the compile (CompileProgress).
Result<CompileReport> CompileToContextModel(
    const CompileOptions& opts, const CompileInput& input, CompileOutput out,
    const std::function<void(const CompileProgress&)>& reporter = {});

// Several models into `output_dir` with one blob; `progress` (may be empty) gets a line per step,
// `reporter` (may be empty) follows the compile. ModelCompiler::CompileModels.
Result<MultiCompileReport> CompileModelsIntoOneBlob(
    const CompileOptions& opts, const std::vector<std::string>& model_paths,
    const std::string& output_dir, const std::function<void(const std::string&)>& progress,
    const std::function<void(const CompileProgress&)>& reporter = {});

}  // namespace epctx::compile
