// C entry points of the model compiler.
#include <vector>

#include "capi/capi_types.h"

using epctx::Status;
using epctx::StatusCode;
using epctx::capi::Guard;

namespace {

epctx::SessionOptions CompilerOptionsOf(const epctx_session_options* options) {
  return options == nullptr ? epctx::SessionOptions() : options->options;
}

}  // namespace

extern "C" {

epctx_status* epctx_compile_model(const char* model_path, const char* context_model_path,
                                  const epctx_session_options* options) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(model_path);
    EPCTX_C_REQUIRE(context_model_path);
    return epctx::ModelCompiler(CompilerOptionsOf(options))
        .CompileToFile(std::string(model_path), context_model_path)
        .status();
  });
}

epctx_status* epctx_compile_models(const char* const* model_paths, size_t model_count,
                                   const char* output_dir, const epctx_session_options* options) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(model_paths);
    EPCTX_C_REQUIRE(output_dir);
    std::vector<std::string> paths;
    for (size_t i = 0; i < model_count; ++i) {
      EPCTX_C_REQUIRE(model_paths[i]);
      paths.emplace_back(model_paths[i]);
    }
    auto report = epctx::ModelCompiler(CompilerOptionsOf(options)).CompileModels(paths, output_dir);
    if (!report.ok()) return report.status();
    if (report->written) return Status::Ok();
    // Per-model failures: the first failure's code, and every failure in the message.
    StatusCode code = StatusCode::kOk;
    std::string message = "nothing was written:";
    for (const epctx::ModelCompileResult& m : report->models) {
      if (m.compiled) continue;
      if (code == StatusCode::kOk) code = m.error_code;
      message += " '" + m.model_path + "': " + m.error + ";";
    }
    message.pop_back();
    return Status(code == StatusCode::kOk ? StatusCode::kInternal : code, message);
  });
}

}  // extern "C"
