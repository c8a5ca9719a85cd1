// The public ModelCompiler: parses SessionOptions like a session does (every key known, the
// session's own accepted and ignored) and hands the compile's options to compile/.
#include "compile/context_compiler.h"
#include "epctx/compiler.h"
#include "loader/engine_options.h"
#include "util/status_macros.h"

namespace epctx {
namespace {

Result<compile::CompileOptions> CompileOptionsOf(const SessionOptions& options) {
  EPCTX_ASSIGN_OR_RETURN(loader::EngineOptions opts, loader::ParseEngineOptions(options));
  return opts.compile;
}

using Reporter = std::function<void(const CompileProgress&)>;

Result<CompileReport> CompileOne(const SessionOptions& options, const compile::CompileInput& input,
                                 compile::CompileOutput out, const Reporter& reporter) {
  EPCTX_ASSIGN_OR_RETURN(compile::CompileOptions opts, CompileOptionsOf(options));
  return compile::CompileToContextModel(opts, input, std::move(out), reporter);
}

Result<std::string> CompileToMemory(const SessionOptions& options,
                                    const compile::CompileInput& input, CompileReport* report,
                                    const Reporter& reporter) {
  std::string bytes;
  EPCTX_ASSIGN_OR_RETURN(CompileReport r, CompileOne(options, input, {"", &bytes}, reporter));
  if (report != nullptr) *report = std::move(r);
  return bytes;
}

}  // namespace

ModelCompiler::ModelCompiler(SessionOptions options) : options_(std::move(options)) {}

void ModelCompiler::SetProgressCallback(std::function<void(const std::string&)> callback) {
  progress_ = std::move(callback);
}

void ModelCompiler::SetProgressReporter(std::function<void(const CompileProgress&)> reporter) {
  reporter_ = std::move(reporter);
}

Result<CompileReport> ModelCompiler::CompileToFile(const std::string& model_path,
                                                   const std::string& context_model_path) const {
  return CompileOne(options_, {model_path, {}}, {context_model_path, nullptr}, reporter_);
}

Result<CompileReport> ModelCompiler::CompileToFile(std::span<const std::byte> model_bytes,
                                                   const std::string& context_model_path) const {
  return CompileOne(options_, {"", model_bytes}, {context_model_path, nullptr}, reporter_);
}

Result<std::string> ModelCompiler::CompileToBytes(const std::string& model_path,
                                                  CompileReport* report) const {
  return CompileToMemory(options_, {model_path, {}}, report, reporter_);
}

Result<std::string> ModelCompiler::CompileToBytes(std::span<const std::byte> model_bytes,
                                                  CompileReport* report) const {
  return CompileToMemory(options_, {"", model_bytes}, report, reporter_);
}

Result<MultiCompileReport> ModelCompiler::CompileModels(const std::vector<std::string>& model_paths,
                                                        const std::string& output_dir) const {
  EPCTX_ASSIGN_OR_RETURN(compile::CompileOptions opts, CompileOptionsOf(options_));
  return compile::CompileModelsIntoOneBlob(opts, model_paths, output_dir, progress_, reporter_);
}

}  // namespace epctx
