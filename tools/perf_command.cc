// `epctx perf MODEL`: session creation and inference timing in the spirit of
// onnxruntime_perf_test, whose output lines it mirrors so that scripts can read either.
//
// Session creation is timed `--creations` times in this process: the first creation maps and
// verifies the blob; the later ones are made while the first session is alive, so they reuse the
// mapping, as further sessions of one model do in an application.

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli_util.h"
#include "commands.h"
#include "epctx/session.h"
#include "run_inputs.h"
#include "util/status_macros.h"

namespace epctx::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct PerfArgs {
  std::string model;
  std::vector<std::string> inputs;
  bool generate_inputs = false;
  int repeat = 10;
  int creations = 10;
  int threads = 0;
  std::string load_mode;
  bool compare_original = false;
  bool json = false;
  std::vector<std::string> config;
};

struct Stats {
  double min = 0, median = 0, mean = 0, max = 0;
  std::vector<double> sorted;
  double Percentile(double p) const {
    if (sorted.empty()) return 0;
    size_t i = static_cast<size_t>(p / 100.0 * static_cast<double>(sorted.size() - 1) + 0.5);
    return sorted[std::min(i, sorted.size() - 1)];
  }
};

Stats Summarize(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  double total = 0;
  for (double x : v) total += x;
  s.mean = total / static_cast<double>(v.size());
  s.sorted = std::move(v);
  return s;
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

uint64_t PeakRssBytes() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
}

// Inputs from the model's declared shapes: symbolic dims become 1; floats uniform in [-1, 1),
// integers and booleans zero.
Result<std::unordered_map<std::string, Tensor>> GenerateInputs(
    const std::vector<ValueInfo>& infos) {
  std::unordered_map<std::string, Tensor> out;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const ValueInfo& v : infos) {
    std::vector<int64_t> shape = v.shape;
    for (int64_t& d : shape) d = d < 0 ? 1 : d;
    EPCTX_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(v.dtype, shape));
    if (v.dtype == DataType::kFloat32) {
      for (int64_t i = 0; i < t.element_count(); ++i) t.mutable_data_as<float>()[i] = dist(rng);
    } else {
      std::memset(t.mutable_data(), 0, t.byte_size());
    }
    out.emplace(v.name, std::move(t));
  }
  return out;
}

// Times `count` creations; keeps the first session alive (returned) so later ones share its blob.
Result<std::unique_ptr<Session>> TimeCreations(const std::string& model,
                                               const SessionOptions& options, int count,
                                               std::vector<double>* seconds) {
  std::unique_ptr<Session> first;
  for (int i = 0; i < count; ++i) {
    Clock::time_point start = Clock::now();
    EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<Session> s, Session::Create(model, options));
    seconds->push_back(SecondsSince(start));
    if (!first) first = std::move(s);
  }
  return first;
}

Status RunPerf(const PerfArgs& args) {
  EPCTX_ASSIGN_OR_RETURN(SessionOptions options, MakeSessionOptions(args.config));
  if (args.threads > 0) {
    options.AddConfigEntry("session.intra_op_num_threads", std::to_string(args.threads));
  }
  if (!args.load_mode.empty()) options.AddConfigEntry("epctx.load_mode", args.load_mode);

  std::vector<double> creation;
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                         TimeCreations(args.model, options, args.creations, &creation));
  std::unordered_map<std::string, Tensor> inputs;
  if (args.generate_inputs) {
    EPCTX_ASSIGN_OR_RETURN(inputs, GenerateInputs(session->inputs()));
  } else {
    EPCTX_ASSIGN_OR_RETURN(inputs, LoadInputs(session->inputs(), args.inputs));
  }
  Clock::time_point start = Clock::now();
  EPCTX_RETURN_IF_ERROR(session->Run(inputs).status());
  double first_inference = SecondsSince(start);
  std::vector<double> latencies;
  Clock::time_point total_start = Clock::now();
  for (int i = 0; i < args.repeat; ++i) {
    start = Clock::now();
    EPCTX_RETURN_IF_ERROR(session->Run(inputs).status());
    latencies.push_back(SecondsSince(start));
  }
  double total = SecondsSince(total_start);

  Stats create = Summarize(std::vector<double>(creation.begin() + 1, creation.end()));
  Stats all_create = Summarize(creation);
  Stats lat = Summarize(latencies);
  const SessionOrigin& origin = session->origin();

  std::vector<double> original_creation;
  if (args.compare_original) {
    if (!origin.from_context_blob || origin.original_model_path.empty()) {
      return EPCTX_ERROR(kInvalidArgument,
                         "--compare-original needs a context model whose "
                         "original model is known and present");
    }
    EPCTX_RETURN_IF_ERROR(
        TimeCreations(origin.original_model_path, options, args.creations, &original_creation)
            .status());
  }
  Stats orig = Summarize(original_creation);
  uint64_t peak = PeakRssBytes();

  if (args.json) {
    nlohmann::json j;
    j["model"] = args.model;
    j["from_context_blob"] = origin.from_context_blob;
    j["fallback_reason"] = origin.fallback_reason;
    j["load_mode"] = args.load_mode.empty() ? "mmap" : args.load_mode;
    j["sessions"] = args.creations;
    j["session_creation_ms"] = {{"first", creation.front() * 1e3},
                                {"subsequent_median", create.median * 1e3},
                                {"min", all_create.min * 1e3},
                                {"max", all_create.max * 1e3}};
    j["first_inference_ms"] = first_inference * 1e3;
    j["latency_ms"] = {{"mean", lat.mean * 1e3},
                       {"p50", lat.Percentile(50) * 1e3},
                       {"p90", lat.Percentile(90) * 1e3},
                       {"p99", lat.Percentile(99) * 1e3}};
    j["peak_rss_bytes"] = peak;
    if (args.compare_original) {
      j["original_model"] = origin.original_model_path;
      j["original_session_creation_ms"] = {{"first", original_creation.front() * 1e3},
                                           {"median", orig.median * 1e3}};
    }
    std::printf("%s\n", j.dump(2).c_str());
    return Status::Ok();
  }

  std::printf("Model: %s (%s)\n", args.model.c_str(),
              origin.from_context_blob ? "context blob" : "compiled in memory");
  if (!origin.fallback_reason.empty()) {
    std::printf("Context blob not used: %s\n", origin.fallback_reason.c_str());
  }
  std::printf("Session creation time cost: %.6f s\n", creation.front());
  if (creation.size() > 1) {
    std::printf(
        "Subsequent session creation (%zu, blob already mapped): min %.6f s, median "
        "%.6f s, max %.6f s\n",
        creation.size() - 1, create.min, create.median, create.max);
  }
  std::printf("First inference time cost: %.3f ms\n", first_inference * 1e3);
  std::printf("Total inference requests: %d\n", args.repeat);
  std::printf("Total inference run time: %.6f s\n", total);
  std::printf("Average inference time cost: %.3f ms\n", lat.mean * 1e3);
  std::printf("Number of inferences per second: %.2f\n",
              total > 0 ? static_cast<double>(args.repeat) / total : 0.0);
  std::printf(
      "P50 Latency: %.6f s\nP90 Latency: %.6f s\nP95 Latency: %.6f s\nP99 Latency: "
      "%.6f s\nP999 Latency: %.6f s\n",
      lat.Percentile(50), lat.Percentile(90), lat.Percentile(95), lat.Percentile(99),
      lat.Percentile(99.9));
  std::printf("Peak working set size: %llu bytes\n", static_cast<unsigned long long>(peak));
  if (args.compare_original) {
    std::printf(
        "\nSession creation from the original model '%s' (compiled in memory), %zu times: "
        "first %.6f s, median %.6f s\n",
        origin.original_model_path.c_str(), original_creation.size(), original_creation.front(),
        orig.median);
    std::printf(
        "Context model vs original: first creation %.1fx faster, median creation %.1fx "
        "faster\n",
        original_creation.front() / creation.front(),
        orig.median / (creation.size() > 1 ? create.median : creation.front()));
  }
  return Status::Ok();
}

}  // namespace

Command AddPerfCommand(CLI::App& parent, const GlobalOptions&) {
  auto args = std::make_shared<PerfArgs>();
  CLI::App* app = parent.add_subcommand(
      "perf", "Time session creation and inference (lines as onnxruntime_perf_test prints them)");
  app->add_option("model", args->model, "Context model or original ONNX model")
      ->required()
      ->type_name("MODEL");
  app->add_option("--input", args->inputs, "Input tensor NAME=FILE (.npy or .pb); repeatable")
      ->type_name("NAME=FILE");
  app->add_flag("-I,--generate-inputs", args->generate_inputs,
                "Generate inputs from the model's declared shapes (unknown dims = 1; floats "
                "uniform in [-1,1), other types zero)");
  app->add_option("-r,--repeat", args->repeat, "Timed inferences after the first one")
      ->default_val(10)
      ->check(CLI::Range(1, 1000000));
  app->add_option("--creations", args->creations,
                  "Session creations to time (the first maps the blob; later ones reuse it)")
      ->default_val(10)
      ->check(CLI::Range(1, 100000));
  app->add_option("-x,--threads", args->threads, "Kernel threads (0 = all cores)")
      ->default_val(0)
      ->check(CLI::Range(0, 1024));
  app->add_option("--load-mode", args->load_mode, "epctx.load_mode: mmap or populate")
      ->check(CLI::IsMember({"mmap", "populate"}));
  app->add_flag("--compare-original", args->compare_original,
                "Also time session creation from the context model's original ONNX model");
  app->add_flag("--json", args->json, "Print one JSON object instead of the table");
  AddConfigOption(*app, &args->config);
  return Command{app, [args]() { return RunPerf(*args); }};
}

}  // namespace epctx::cli
