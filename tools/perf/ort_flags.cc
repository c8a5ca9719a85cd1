#include "perf/ort_flags.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>

#include "cli_util.h"
#include "util/status_macros.h"

namespace epctx::cli {
namespace {

// The -e names onnxruntime_perf_test accepts, with the provider each selects.
struct Provider {
  const char* flag;
  const char* name;
};
constexpr Provider kProviders[] = {
    {"cpu", "CPUExecutionProvider"},           {"cuda", "CUDAExecutionProvider"},
    {"dnnl", "DnnlExecutionProvider"},         {"openvino", "OpenVINOExecutionProvider"},
    {"tensorrt", "TensorrtExecutionProvider"}, {"nvtensorrtrtx", "NvTensorRTRTXExecutionProvider"},
    {"qnn", "QNNExecutionProvider"},           {"snpe", "SNPEExecutionProvider"},
    {"nnapi", "NnapiExecutionProvider"},       {"vsinpu", "VSINPUExecutionProvider"},
    {"coreml", "CoreMLExecutionProvider"},     {"dml", "DmlExecutionProvider"},
    {"acl", "ACLExecutionProvider"},           {"migraphx", "MIGraphXExecutionProvider"},
    {"xnnpack", "XnnpackExecutionProvider"},   {"vitisai", "VitisAIExecutionProvider"},
    {"webgpu", "WebGpuExecutionProvider"},
};

Status CheckProvider(const std::string& flag) {
  if (flag == "cpu") return Status::Ok();
  for (const Provider& p : kProviders) {
    if (flag == p.flag) {
      return EPCTX_ERROR(kUnsupported,
                         "-e {}: epctx runs models only with its own CPU kernels; it has no {} "
                         "(onnxruntime_perf_test's -e {}). Use -e cpu, the default",
                         flag, p.name, flag);
    }
  }
  std::vector<std::string> known;
  for (const Provider& p : kProviders) known.push_back(p.flag);
  return EPCTX_ERROR(kInvalidArgument,
                     "-e {}: not a provider onnxruntime_perf_test knows ({}); epctx accepts only "
                     "cpu",
                     flag, fmt::join(known, ", "));
}

// onnxruntime_perf_test reads -i only for the providers that take options; its CPU provider
// takes none, so no -i entry can mean anything here.
Status CheckProviderOptions(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    for (const std::string& entry : SplitConfigEntries(arg)) {
      size_t bar = entry.find('|');
      if (bar == std::string::npos || bar == 0) {
        return EPCTX_ERROR(kInvalidArgument,
                           "-i '{}': use a '|' to separate the key and value of a provider "
                           "option, as in -i \"key1|value1 key2|value2\"",
                           entry);
      }
      return EPCTX_ERROR(kUnsupported,
                         "-i '{}': provider options configure an execution provider, and epctx "
                         "has only its CPU kernels, for which onnxruntime_perf_test reads no -i "
                         "options either; give session options with -C",
                         entry);
    }
  }
  return Status::Ok();
}

// -f "name:value" entries, several per argument separated by spaces, value > 0 (as ORT's
// ParseDimensionOverride).
Status ParseFreeDims(PerfArgs& args) {
  for (const std::string& arg : args.free_dim_args) {
    for (const std::string& entry : SplitConfigEntries(arg)) {
      size_t colon = entry.rfind(':');
      int64_t value = 0;
      const char* end = entry.data() + entry.size();
      bool ok = colon != std::string::npos && colon > 0;
      if (ok) {
        auto [p, ec] = std::from_chars(entry.data() + colon + 1, end, value);
        ok = ec == std::errc() && p == end && value > 0;
      }
      if (!ok) {
        return EPCTX_ERROR(kInvalidArgument,
                           "-f '{}': expected NAME:VALUE with a dimension name and a value > 0, "
                           "as in -f \"batch:4\"",
                           entry);
      }
      args.free_dims[entry.substr(0, colon)] = value;
    }
  }
  return Status::Ok();
}

// ORT's levels: 0 (disable), 1 (basic), 2 (extended), 3 (layout), 99 (all); above 99 means all.
Status CheckOptimizationLevel(PerfArgs& args) {
  int& o = args.optimization_level;
  if (o > 99) o = 99;
  if (o == 0 || o == 1 || o == 2 || o == 3 || o == 99) return Status::Ok();
  return EPCTX_ERROR(kInvalidArgument,
                     "-o {}: graph optimization levels are 0 (disable), 1 (basic), 2 (extended), "
                     "3 (layout) and 99 (all)",
                     o);
}

std::vector<std::string> Notes(const PerfArgs& args) {
  std::vector<std::string> notes;
  if (args.threads > 0) {
    notes.push_back(fmt::format("Setting intra_op_num_threads to {}", args.threads));
  }
  if (args.optimization_level != 99) {
    notes.push_back(fmt::format(
        "-o {}: changes nothing here: epctx always runs its own compile passes (constant folding, "
        "BatchNormalization folded into Conv, activation fusion, identity and dead-node "
        "elimination), and a context model holds programs compiled already",
        args.optimization_level));
  }
  if (args.disable_arena) {
    notes.push_back(
        "-A: changes nothing here: each session reserves one activation arena, sized by the "
        "compiled memory plan, at creation, and keeps the buffers of values whose shapes are "
        "known only at run time for its next run; neither can be turned off");
  }
  if (args.disable_memory_pattern) {
    notes.push_back(
        "-M: changes nothing here: epctx's memory plan (each value's arena offset) is compiled "
        "into the program and always used; a value larger than planned goes to the heap");
  }
  if (args.inter_op_threads > 0) {
    notes.push_back(fmt::format(
        "-y {}: changes nothing here: epctx runs nodes one at a time, like ONNX Runtime's "
        "sequential executor, which ignores -y too (it is used only with -P)",
        args.inter_op_threads));
  }
  if (args.concurrent > 1) {
    notes.push_back(fmt::format(
        "-c {}: {} threads call Run on the one session; epctx serializes the runs of a session "
        "(one activation arena each), so the requests queue and each latency includes its wait",
        args.concurrent, args.concurrent));
  }
  if (args.from_memory) {
    notes.push_back(
        "-l: the model file is read into memory and handed to Session::CreateFromMemory with "
        "ep.context_file_path set to its path; the read is part of each timed creation");
  }
  if (args.seed >= 0 && !args.generate_inputs) {
    notes.push_back("-S: changes nothing without -I (it seeds the generated inputs)");
  }
  if (!args.free_dims.empty() && !args.generate_inputs) {
    notes.push_back(
        "-f: changes nothing without -I: epctx applies free-dimension overrides to the inputs "
        "it generates, not to the model");
  }
  if (args.exit_after_creation && !args.result_file.empty()) {
    notes.push_back("-n: no result file is written, as onnxruntime_perf_test writes none");
  }
  return notes;
}

}  // namespace

const std::vector<RefusedFlag>& RefusedFlags() {
  static const std::vector<RefusedFlag> flags = {
      {"-F", true, "free dimension override by denotation",
       "epctx keeps no dimension denotations; override by name with -f"},
      {"-P", false, "the parallel executor",
       "epctx runs nodes one at a time in program order (kernels use the -x threads)"},
      {"-T", true, "intra-op thread affinities", "epctx's kernel threads take no affinity setting"},
      {"-D", false, "no spinning of intra-op threads",
       "epctx's worker threads spin briefly then sleep, a fixed policy with no setting"},
      {"-Z", false, "no spinning between runs",
       "epctx's worker threads spin briefly then sleep, a fixed policy with no setting"},
      {"-z", false, "denormals as zero", "epctx has no denormals-as-zero setting"},
      {"-R", true, "a custom-op library", "epctx loads no custom-op libraries"},
      {"-X", false, "onnxruntime-extensions custom ops", "epctx has no onnxruntime-extensions"},
      {"-u", true, "saving the optimized model",
       "epctx's compiled form is a context model and blob: write them with `epctx compile`"},
      {"-d", true, "[CUDA] the cuDNN convolution algorithm", "epctx runs on the CPU only"},
      {"-q", false, "[CUDA] copies in a separate stream", "epctx runs on the CPU only"},
      {"-g", false, "[CUDA, TensorRT] inputs and outputs bound on the GPU",
       "epctx runs on the CPU only"},
  };
  return flags;
}

void AddRefusedFlags(CLI::App& app, PerfArgs* args) {
  const std::string group = "Refused (onnxruntime_perf_test flags epctx cannot honour)";
  for (const RefusedFlag& f : RefusedFlags()) {
    std::string help = fmt::format("{}: refused, {}", f.meaning, f.reason);
    std::string name = f.name;
    auto record = [args, name](auto&&...) { args->refused.push_back(name); };
    if (f.takes_value) {
      app.add_option_function<std::string>(name, record, help)->group(group);
    } else {
      app.add_flag_function(name, record, help)->group(group);
    }
  }
}

Result<std::vector<std::string>> FinishArgs(PerfArgs& args) {
  if (!args.refused.empty()) {
    for (const RefusedFlag& f : RefusedFlags()) {
      if (args.refused.front() == f.name) {
        return EPCTX_ERROR(kUnsupported, "{} ({} in onnxruntime_perf_test) is refused: {}", f.name,
                           f.meaning, f.reason);
      }
    }
  }
  EPCTX_RETURN_IF_ERROR(CheckProvider(args.provider));
  EPCTX_RETURN_IF_ERROR(CheckProviderOptions(args.provider_options));
  EPCTX_RETURN_IF_ERROR(ParseFreeDims(args));
  EPCTX_RETURN_IF_ERROR(CheckOptimizationLevel(args));
  // As onnxruntime_perf_test: an explicit -r selects "times", then an explicit -t "duration".
  if (args.repeat_given) args.test_mode = "times";
  if (args.seconds_given) args.test_mode = "duration";
  // Statistics are on when there is no result file, as onnxruntime_perf_test has them.
  if (args.result_file.empty()) args.statistics = true;
  return Notes(args);
}

}  // namespace epctx::cli
