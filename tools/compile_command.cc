// `epctx compile MODEL.onnx [-o OUT_ctx.onnx | --output-dir DIR] [-C KEY|VALUE]... [-i
// KEY|VALUE]...` `epctx compile -m A.onnx -m B.onnx --output-dir DIR`  (several models, one shared
// blob) `epctx compile --list`                  (targets, packing layouts and operators)

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "cli_util.h"
#include "commands.h"
#include "compile_progress.h"
#include "epctx/compiler.h"
#include "util/file.h"
#include "util/status_macros.h"

namespace epctx::cli {
namespace {

struct CompileArgs {
  std::vector<std::string> positional;
  std::vector<std::string> models;  // -m
  std::string output;
  std::string output_dir;
  std::vector<std::string> config;          // -C: context options (ep.*)
  std::vector<std::string> engine_options;  // -i: engine options (epctx.*, session.*)
  bool list = false;
  std::string target;                           // --target: epctx.target_isa
  std::string precision;                        // --precision: epctx.precision
  bool allow_unsupported = false;               // --allow-unsupported: epctx.allow_unsupported
  std::vector<std::string> free_dims;           // -f: epctx.free_dimension_overrides
  ProgressMode progress = ProgressMode::kAuto;  // --progress
  bool quiet = false;                           // -q: --progress never
};

// -o as given; else <DIR or the model's directory>/<stem>_ctx.onnx.
std::string ContextModelPath(const std::string& model_path, const CompileArgs& args) {
  if (!args.output.empty()) return args.output;
  return DefaultContextModelPathFor(model_path, args.output_dir);
}

void PrintReport(const CompileReport& report, double seconds) {
  std::printf("context model: %s\n", report.context_model_path.c_str());
  if (report.blob_pending) {
    std::printf(
        "blob:          %s (shared; written by the call with "
        "ep.stop_share_ep_contexts=1)\n",
        report.blob_path.c_str());
  } else if (report.blob_path.empty()) {
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
}

// Every model's outcome, then the shared blob; an error when anything was not written.
Status PrintMultiReport(const MultiCompileReport& report, double seconds) {
  for (const ModelCompileResult& m : report.models) {
    if (m.compiled) {
      std::printf("compiled  %s -> %s (%zu nodes, %s of weights)\n", m.model_path.c_str(),
                  m.context_model_path.c_str(), m.node_count, FormatBytes(m.weight_bytes).c_str());
    } else {
      std::printf("FAILED    %s: %s\n", m.model_path.c_str(), m.error.c_str());
    }
  }
  if (!report.written) {
    return EPCTX_ERROR(kFailedPrecondition,
                       "nothing was written: every model must compile for the shared blob to be "
                       "written (see the FAILED lines above)");
  }
  std::printf("shared blob: %s, %s; %zu unique weights, %s (%zu found already stored)\n",
              report.blob_path.empty() ? "(embedded)" : report.blob_path.c_str(),
              FormatBytes(report.blob_size).c_str(), report.weight_count,
              FormatBytes(report.weight_bytes).c_str(), report.dedup_hits);
  std::printf("compile time: %s\n", FormatSeconds(seconds).c_str());
  return Status::Ok();
}

std::vector<std::string> AllModels(const CompileArgs& args) {
  std::vector<std::string> models = args.positional;
  models.insert(models.end(), args.models.begin(), args.models.end());
  return models;
}

// Usage errors (exit status 2), checked once the command line is parsed.
void CheckUsage(const CompileArgs& args) {
  size_t n = AllModels(args).size();
  if (args.list) {
    if (n > 0) {
      throw CLI::ValidationError("--list",
                                 "--list shows what this build compiles for; it takes "
                                 "no model");
    }
    return;
  }
  if (n == 0) throw CLI::ValidationError("model", "a model is required (MODEL or -m MODEL)");
  if (n > 1 && !args.output.empty()) {
    throw CLI::ValidationError("-o",
                               "several models need --output-dir: -o names one context model");
  }
  if (n > 1 && args.output_dir.empty()) {
    throw CLI::ValidationError("--output-dir",
                               "several models need --output-dir (they share one blob)");
  }
}

Status ListTargets() {
  CompileTarget t = CurrentCompileTarget();
  std::printf("target (this build; one per build):\n");
  std::printf("  hardware_architecture: %s\n", t.hardware_architecture.c_str());
  std::printf("  packing build id:      %s\n", t.packing_build_id.c_str());
  std::printf("  pack layout version:   %u\n", t.pack_layout_version);
  std::printf("  kernel ISA:            %s\n",
              t.kernel_isa.empty() ? "(none)" : t.kernel_isa.c_str());
  std::printf("  kernel library:        %s\n", t.kernel_library.c_str());
  std::printf("  int8 kernels:          %s\n",
              t.int8_vnni ? "oneDNN with VNNI, for every int8 weight"
                          : "oneDNN without VNNI, for int8 weights within [-64, 64] (others on "
                            "exact kernels of epctx)");
  std::printf("  usable on this CPU:    %s\n", t.usable_on_this_cpu ? "yes" : "no");
  std::printf("pack layouts:\n");
  for (const std::string& l : PackLayoutDescriptions()) std::printf("  %s\n", l.c_str());
  std::vector<std::string> ops = SupportedOperatorLines();
  std::printf(
      "operators (%zu; a node whose model imports an older opset of the domain is refused):\n",
      ops.size());
  for (const std::string& l : ops) std::printf("  %s\n", l.c_str());
  std::printf(
      "element types: each operator's line names the value whose element type its kernel "
      "computes on and the types it takes there (\"input 0: float32\"); the kernel checks its "
      "other values (indices, shapes, axes) itself. A node of another type is refused when its "
      "model is compiled, naming the node, the value and the "
      "type (epctx.allow_unsupported=1 writes the context model all the same). Float16 models "
      "compute in float32: their float16 values become float32 at compile, so a float16 Conv "
      "runs on Conv's float32 kernel (docs/KERNELS.md, \"Weight-only int4/int8 (MatMulNBits) "
      "and float16 models\"), and a float16 operator expanded at compile is expanded in float32 "
      "between Casts\n");
  return Status::Ok();
}

Status RunCompile(const CompileArgs& args, const GlobalOptions& global) {
  if (args.list) return ListTargets();
  std::vector<std::string> models = AllModels(args);
  std::vector<std::string> entries = args.config;
  entries.insert(entries.end(), args.engine_options.begin(), args.engine_options.end());
  if (!args.target.empty()) entries.push_back("epctx.target_isa|" + args.target);
  if (!args.precision.empty()) entries.push_back("epctx.precision|" + args.precision);
  if (args.allow_unsupported) entries.push_back("epctx.allow_unsupported|1");
  if (!args.free_dims.empty()) {
    entries.push_back(
        fmt::format("epctx.free_dimension_overrides|{}", fmt::join(args.free_dims, ",")));
  }
  EPCTX_ASSIGN_OR_RETURN(
      SessionOptions options,
      MakeSessionOptions(entries,
                         "(with -C or -i, or by a flag that sets it: --target, --precision, "
                         "--allow-unsupported, -f)"));
  for (const std::string& m : models) {
    // Checked first so that a mistyped name leaves no output directory behind.
    if (!std::filesystem::exists(m)) return EPCTX_ERROR(kNotFound, "'{}': file not found", m);
  }
  ModelCompiler compiler(std::move(options));
  if (global.verbosity > 0) {
    compiler.SetProgressCallback(
        [](const std::string& message) { std::fprintf(stderr, "epctx: %s\n", message.c_str()); });
  }
  CompileProgressLine progress_line(args.quiet ? ProgressMode::kNever : args.progress);
  compiler.SetProgressReporter(
      [&progress_line](const CompileProgress& p) { progress_line.Update(p); });
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };

  if (models.size() > 1) {
    EPCTX_ASSIGN_OR_RETURN(MultiCompileReport report,
                           compiler.CompileModels(models, args.output_dir));
    progress_line.Clear();
    return PrintMultiReport(report, elapsed());
  }

  std::string output = ContextModelPath(models[0], args);
  if (SameFile(output, models[0])) {
    return EPCTX_ERROR(kInvalidArgument,
                       "'{}': the context model would overwrite the original model; choose "
                       "another output with -o",
                       output);
  }
  std::string output_dir = std::filesystem::path(output).parent_path().string();
  if (!output_dir.empty()) EPCTX_RETURN_IF_ERROR(CreateDirectories(output_dir));
  EPCTX_ASSIGN_OR_RETURN(CompileReport report, compiler.CompileToFile(models[0], output));
  progress_line.Clear();
  PrintReport(report, elapsed());
  return Status::Ok();
}

}  // namespace

Command AddCompileCommand(CLI::App& parent, const GlobalOptions& global) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* app = parent.add_subcommand(
      "compile",
      "Compile ONNX models into context models (NAME_ctx.onnx) and a context blob: one model "
      "(blob NAME_ctx.epctx beside it), or several (-m ... --output-dir DIR) sharing one blob");
  app->add_option("model", args->positional, "Original ONNX model(s)")->type_name("MODEL.onnx");
  app->add_option("-m,--model", args->models,
                  "A model to compile; repeat for several models sharing one blob (identical "
                  "weights stored once); several models need --output-dir")
      ->type_name("MODEL.onnx");
  CLI::Option* output =
      app->add_option("-o,--output", args->output,
                      "Context model to write (one model only); the blob goes beside it with the "
                      "extension .epctx (default: <stem>_ctx.onnx in the model's directory)");
  output->type_name("FILE");
  CLI::Option* output_dir =
      app->add_option("--output-dir", args->output_dir,
                      "Write DIR/<stem>_ctx.onnx per model (a repeated stem gets _1, _2, ... with "
                      "a warning) and, for several models, the shared blob "
                      "DIR/<first stem>_shared.epctx")
          ->type_name("DIR");
  output->excludes(output_dir);
  AddConfigOption(*app, &args->config);
  app->add_option("-i", args->engine_options,
                  "Engine option \"KEY|VALUE\" (epctx.* and session.* keys; see below); "
                  "repeatable")
      ->type_name("\"KEY|VALUE\"");
  app->add_option("--target", args->target,
                  "CPU tier to pack the weights for: native (this CPU's, default), avx2 or "
                  "avx512_core; a blob packed for a lower tier than the client's CPU still runs "
                  "there (same as -i \"epctx.target_isa|TIER\")")
      ->check(CLI::IsMember({"native", "avx2", "avx512_core"}));
  app->add_option("--precision", args->precision,
                  "fp32 (default): compute as the model says; bf16: convolutions and matmuls with "
                  "constant weights multiply in bfloat16 (weights stored as bfloat16, float32 "
                  "sums), for CPUs with avx512_bf16 only (same as -i \"epctx.precision|bf16\")")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  app->add_flag("--allow-unsupported", args->allow_unsupported,
                "Write the context model even when some node has no kernel here (its sessions "
                "then fail, or fall back to the original model); without it such a model is "
                "refused, naming each node (same as -i \"epctx.allow_unsupported|1\")");
  app->add_option("-f,--free-dim", args->free_dims,
                  "Fix the inputs' symbolic dimension NAME to SIZE, as onnxruntime_perf_test's -f "
                  "does: the context model then declares and compiles that shape (a planned "
                  "arena, kernels made at session creation) and refuses inputs of other sizes; "
                  "repeatable (same as -i \"epctx.free_dimension_overrides|NAME:SIZE,...\")")
      ->type_name("NAME:SIZE")
      ->allow_extra_args(false);
  app->add_option("--progress", args->progress,
                  "Show the compile's progress on stderr (stage, weights written of total, bytes "
                  "written): auto (on a terminal, once the compile has run for a second), always "
                  "(from the start, a line per update, also into a pipe or log) or never")
      ->transform(CLI::CheckedTransformer(
                      std::map<std::string, ProgressMode>{{"auto", ProgressMode::kAuto},
                                                          {"always", ProgressMode::kAlways},
                                                          {"never", ProgressMode::kNever}})
                      .description(""))
      ->type_name("auto|always|never")
      ->default_str("auto");
  app->add_flag("-q,--quiet", args->quiet, "No progress display (same as --progress never)");
  app->add_flag(
      "--list", args->list,
      "Show what this build compiles for: target, pack layouts, and the operators its kernels run");
  app->parse_complete_callback([args] { CheckUsage(*args); });
  app->footer("Options for -C and -i (defaults in parentheses):\n" + DescribeConfigKeys() +
              "\nEvery output is written atomically; parent directories are created. With several "
              "models, nothing is written unless all compile.\n"
              "Examples:\n"
              "  epctx compile resnet50.onnx -o out/resnet50_ctx.onnx\n"
              "  epctx compile -m trunk_cls.onnx -m trunk_reg.onnx --output-dir out/ -v\n"
              "  epctx compile model.onnx -C \"ep.context_embed_mode|1\"\n"
              "  epctx compile model.onnx --target avx2   # for clients without AVX-512");
  return {app, [args, &global] { return RunCompile(*args, global); }};
}

}  // namespace epctx::cli
