// `epctx compile MODEL.onnx [-o OUT_ctx.onnx | --output-dir DIR] [-C KEY|VALUE]...`

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "cli_util.h"
#include "commands.h"
#include "epctx/compiler.h"
#include "util/status_macros.h"

namespace epctx::cli {
namespace {

struct CompileArgs {
  std::string model;
  std::string output;
  std::string output_dir;
  std::vector<std::string> config;
};

// -o as given; else <DIR or the model's directory>/<stem>_ctx.onnx.
std::string ContextModelPath(const CompileArgs& args) {
  if (!args.output.empty()) return args.output;
  std::filesystem::path model(args.model);
  std::filesystem::path dir =
      args.output_dir.empty() ? model.parent_path() : std::filesystem::path(args.output_dir);
  return (dir / (model.stem().string() + "_ctx.onnx")).string();
}

bool SameFile(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (std::filesystem::equivalent(a, b, ec)) return true;
  auto ca = std::filesystem::weakly_canonical(a, ec);
  if (ec) return false;
  auto cb = std::filesystem::weakly_canonical(b, ec);
  return !ec && ca == cb;
}

void PrintReport(const CompileReport& report, double seconds) {
  std::printf("context model: %s\n", report.context_model_path.c_str());
  if (report.blob_path.empty()) {
    std::printf("blob:          embedded in the context model, %s\n",
                FormatBytes(report.blob_size).c_str());
  } else {
    std::printf("blob:          %s, %s\n", report.blob_path.c_str(),
                FormatBytes(report.blob_size).c_str());
  }
  std::printf("weights:       %zu tensors, %s\n", report.weight_count,
              FormatBytes(report.weight_bytes).c_str());
  std::printf("nodes:         %zu\n", report.node_count);
  std::printf("compile time:  %s\n", FormatSeconds(seconds).c_str());
  for (const std::string& warning : report.warnings) {
    std::fprintf(stderr, "epctx: warning: %s\n", warning.c_str());
  }
}

Status RunCompile(const CompileArgs& args) {
  EPCTX_ASSIGN_OR_RETURN(SessionOptions options, MakeSessionOptions(args.config));
  if (!std::filesystem::exists(args.model)) {
    // Checked here so that a mistyped model name does not leave an output directory behind.
    return EPCTX_ERROR(kNotFound, "'{}': file not found", args.model);
  }
  std::string output = ContextModelPath(args);
  if (SameFile(output, args.model)) {
    return EPCTX_ERROR(kInvalidArgument,
                       "'{}': the context model would overwrite the original model; choose "
                       "another output with -o",
                       output);
  }
  std::string output_dir = std::filesystem::path(output).parent_path().string();
  if (!output_dir.empty()) EPCTX_RETURN_IF_ERROR(CreateDirectories(output_dir));

  ModelCompiler compiler(std::move(options));
  auto start = std::chrono::steady_clock::now();
  EPCTX_ASSIGN_OR_RETURN(CompileReport report, compiler.CompileToFile(args.model, output));
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  PrintReport(report, elapsed.count());
  return Status::Ok();
}

}  // namespace

Command AddCompileCommand(CLI::App& parent, const GlobalOptions& /*global*/) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* app = parent.add_subcommand(
      "compile",
      "Compile an ONNX model into a context model (NAME_ctx.onnx) and its context blob "
      "(NAME_ctx.epctx, written beside it)");
  app->add_option("model", args->model, "The original ONNX model")
      ->required()
      ->type_name("MODEL.onnx");
  CLI::Option* output =
      app->add_option("-o,--output", args->output,
                      "Context model to write; the blob goes beside it with the extension .epctx "
                      "(default: <stem>_ctx.onnx in the model's directory)");
  output->type_name("FILE");
  CLI::Option* output_dir =
      app->add_option("--output-dir", args->output_dir, "Write DIR/<stem>_ctx.onnx (and its blob)")
          ->type_name("DIR");
  output->excludes(output_dir);
  AddConfigOption(*app, &args->config);
  app->footer(
      "The context model and its blob are written atomically; parent directories are created.\n"
      "Example: epctx compile resnet50.onnx -o out/resnet50_ctx.onnx");
  return {app, [args] { return RunCompile(*args); }};
}

}  // namespace epctx::cli
