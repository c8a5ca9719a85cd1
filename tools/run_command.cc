// `epctx run MODEL --input NAME=FILE... [--output-dir DIR] [--repeat N] [-C KEY|VALUE]...`

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_util.h"
#include "commands.h"
#include "epctx/session.h"
#include "epctx/tensor_io.h"
#include "run_inputs.h"
#include "tensor_summary.h"
#include "util/file.h"
#include "util/status_macros.h"

namespace epctx::cli {
namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::string output_dir;
  std::vector<std::string> config;
  int repeat = 1;
  bool timed = false;  // --repeat was given
};

void PrintOrigin(const Session& session, double create_seconds) {
  const SessionOrigin& origin = session.origin();
  if (origin.from_context_blob) {
    std::fprintf(stderr, "epctx: session from context blob '%s' (context model '%s') in %s\n",
                 origin.blob_path.empty() ? "(embedded)" : origin.blob_path.c_str(),
                 origin.context_model_path.c_str(), FormatSeconds(create_seconds).c_str());
  } else {
    std::fprintf(stderr, "epctx: session compiled in memory from original model '%s' in %s\n",
                 origin.original_model_path.c_str(), FormatSeconds(create_seconds).c_str());
  }
  if (!origin.fallback_reason.empty()) {
    std::fprintf(stderr, "epctx: context blob not used: %s\n", origin.fallback_reason.c_str());
  }
}

void PrintTimes(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  double total = 0;
  for (double s : seconds) total += s;
  std::printf("run time over %zu runs: min %s, median %s, mean %s, max %s\n", seconds.size(),
              FormatSeconds(seconds.front()).c_str(),
              FormatSeconds(seconds[seconds.size() / 2]).c_str(),
              FormatSeconds(total / static_cast<double>(seconds.size())).c_str(),
              FormatSeconds(seconds.back()).c_str());
}

// DIR/<escaped name>.npy for a tensor; DIR/<escaped name>@<i>.npy for element i of a sequence.
// '@' is never left as it is by EscapeFileName, so no output name's file is another's element.
std::string OutputPath(const std::string& dir, const std::string& name,
                       std::optional<size_t> element = std::nullopt) {
  std::string file = EscapeFileName(name);
  if (element.has_value()) file += "@" + std::to_string(*element);
  return (std::filesystem::path(dir) / (file + ".npy")).string();
}

Status WriteOutputs(const std::string& dir, const std::vector<ValueInfo>& infos,
                    const std::vector<Tensor>& outputs) {
  EPCTX_RETURN_IF_ERROR(CreateDirectories(dir));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = infos[i].name;
    const Tensor& output = outputs[i];
    if (output.kind() == ValueKind::kNone) {
      std::printf("%s: empty optional, no file written\n", name.c_str());
      continue;
    }
    if (output.kind() == ValueKind::kSequence) {
      const std::vector<Tensor>& elements = output.elements();
      std::printf("%s: sequence of %zu %s tensor%s%s\n", name.c_str(), elements.size(),
                  DataTypeName(output.dtype()).c_str(), elements.size() == 1 ? "" : "s",
                  elements.empty() ? ", no file written" : "");
      for (size_t e = 0; e < elements.size(); ++e) {
        std::string path = OutputPath(dir, name, e);
        EPCTX_RETURN_IF_ERROR_CTX(WriteNpy(path, elements[e]), "output '{}' element {}", name, e);
        std::printf("  [%zu] %s %s -> %s\n", e, DataTypeName(elements[e].dtype()).c_str(),
                    ShapeToString(elements[e].shape()).c_str(), path.c_str());
      }
      continue;
    }
    std::string path = OutputPath(dir, name);
    EPCTX_RETURN_IF_ERROR_CTX(WriteNpy(path, output), "output '{}'", name);
    std::printf("%s: %s %s -> %s\n", name.c_str(), DataTypeName(output.dtype()).c_str(),
                ShapeToString(output.shape()).c_str(), path.c_str());
  }
  return Status::Ok();
}

Status RunModel(const RunArgs& args, const GlobalOptions& global) {
  EPCTX_ASSIGN_OR_RETURN(SessionOptions options, MakeSessionOptions(args.config));
  Clock::time_point start = Clock::now();
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Create(args.model, options));
  if (global.verbosity > 0) PrintOrigin(*session, SecondsSince(start));

  EPCTX_ASSIGN_OR_RETURN(auto inputs, LoadInputs(session->inputs(), args.inputs));
  std::vector<Tensor> outputs;
  std::vector<double> times;
  for (int i = 0; i < args.repeat; ++i) {
    start = Clock::now();
    EPCTX_ASSIGN_OR_RETURN(outputs, session->Run(inputs));
    times.push_back(SecondsSince(start));
  }
  const std::vector<ValueInfo>& infos = session->outputs();
  if (outputs.size() != infos.size()) {
    return EPCTX_ERROR(kInternal, "the session returned {} outputs for a model with {}",
                       outputs.size(), infos.size());
  }

  if (!args.output_dir.empty()) {
    EPCTX_RETURN_IF_ERROR(WriteOutputs(args.output_dir, infos, outputs));
  } else {
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::fputs(SummarizeTensor(infos[i].name, outputs[i]).c_str(), stdout);
    }
  }
  if (args.timed) PrintTimes(times);
  return Status::Ok();
}

}  // namespace

Command AddRunCommand(CLI::App& parent, const GlobalOptions& global) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* app = parent.add_subcommand(
      "run", "Run a context model (NAME_ctx.onnx) or an original ONNX model on tensors from files");
  app->add_option("model", args->model, "Context model or original ONNX model")
      ->required()
      ->type_name("MODEL");
  CLI::Validator name_equals_file(
      [](std::string& arg) -> std::string {
        size_t eq = arg.find('=');
        if (eq == std::string::npos || eq + 1 == arg.size()) {
          return "expected NAME=FILE, as in --input input=x.npy; got '" + arg + "'";
        }
        return {};
      },
      "");
  app->add_option("-i,--input", args->inputs,
                  "Model input NAME from FILE, a NumPy .npy or ONNX TensorProto .pb file "
                  "(repeat for each input); a sequence input from an ONNX SequenceProto .pb file; "
                  "an optional input left out is run as an empty optional")
      ->type_name("NAME=FILE")
      ->check(name_equals_file)
      ->allow_extra_args(false);
  app->add_option("--output-dir", args->output_dir,
                  "Write each output to DIR/<escaped output name>.npy (DIR is created; strings as "
                  "'<U' unicode arrays), each element i of a sequence output to "
                  "DIR/<escaped output name>@<i>.npy, and no file for an empty optional output "
                  "(a line says so); without it, print a summary of each output")
      ->type_name("DIR");
  CLI::Option* repeat =
      app->add_option("--repeat", args->repeat, "Run N times and print min/median/mean/max times")
          ->type_name("N")
          ->check(CLI::Range(1, 1000000));
  AddConfigOption(*app, &args->config);
  app->footer(
      "Output file names: the output name with every byte outside A-Z a-z 0-9 . _ - written as\n"
      "%XX (upper-case hex), then \".npy\"; the names \".\", \"..\" and \"\" become \"%2E\", "
      "\"%2E%2E\"\nand \"%\". Distinct output names always give distinct files, e.g. "
      "\"a/b\" -> a%2Fb.npy,\n\"a%2Fb\" -> a%252Fb.npy. Element i of a sequence output goes to\n"
      "<escaped name>@<i>.npy (a%2Fb@0.npy, ...): '@' is always escaped in names, so these never\n"
      "meet another output's file. An empty optional output writes no file.\n"
      "With -v, how the session was created (from the context blob, or compiled from the\n"
      "original model, and why) is printed on stderr.");
  return {app, [args, repeat, &global] {
            args->timed = repeat->count() > 0;
            return RunModel(*args, global);
          }};
}

}  // namespace epctx::cli
