// `epctx perf MODEL`: session creation, inference and memory in the spirit of
// onnxruntime_perf_test, whose output lines it mirrors so that scripts can read either.
//
// Steps, in order (memory is sampled after each; see perf/memory.h for what is counted):
//  1. `--creations C` timed creations. The first session stays alive and runs once right away
//     (the first inference). Later creations are made while it lives, so they reuse the loaded
//     blob, as further sessions of one model do in an application; each is destroyed at once.
//     With --cold, no session is alive before a creation and the model's files are dropped from
//     the page cache first, so every creation and its first run read from storage.
//  2. `--sessions N`: sessions 2..N created and kept, each run once; memory is sampled with 4,
//     16, 64, ... sessions and with N.
//  3. Timed runs of the first session: `-m times` (`-r` runs) or `-m duration` (`-t` seconds).
//  4. `--compare-original`: creations from the original model, timed.
//  5. `--processes P`: this process releases its sessions, then P children (this executable in a
//     hidden child mode) each create one session and run it once; their memory is summed.

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cli_util.h"
#include "commands.h"
#include "epctx/session.h"
#include "perf/cold.h"
#include "perf/memory.h"
#include "perf/processes.h"
#include "perf/progress.h"
#include "perf/report.h"
#include "run_inputs.h"
#include "util/status_macros.h"

namespace epctx::cli {
namespace {

using Clock = std::chrono::steady_clock;
using Inputs = std::unordered_map<std::string, Tensor>;

struct PerfArgs {
  std::string model;
  std::vector<std::string> inputs;
  bool generate_inputs = false;
  std::string test_mode = "times";
  int repeat = 10;
  double seconds = 10;
  int creations = 10;
  int sessions = 1;
  int processes = 0;
  bool cold = false;
  int threads = 0;
  std::string load_mode;  // empty: from -C epctx.load_mode, else mmap
  bool compare_original = false;
  bool json = false;
  bool child = false;
  std::vector<std::string> config;
};

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
Result<Inputs> GenerateInputs(const std::vector<ValueInfo>& infos) {
  Inputs out;
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

Result<Inputs> MakeInputs(const PerfArgs& args, const Session& session) {
  if (args.generate_inputs) return GenerateInputs(session.inputs());
  return LoadInputs(session.inputs(), args.inputs);
}

// The session options, and in `load_mode` the mode they select (--load-mode, or -C
// "epctx.load_mode|...", or the default).
Result<SessionOptions> OptionsFor(const PerfArgs& args, std::string* load_mode) {
  EPCTX_ASSIGN_OR_RETURN(SessionOptions options, MakeSessionOptions(args.config));
  if (args.threads > 0) {
    options.AddConfigEntry("session.intra_op_num_threads", std::to_string(args.threads));
  }
  std::optional<std::string> configured = options.GetConfigEntry("epctx.load_mode");
  if (configured && !args.load_mode.empty() && *configured != args.load_mode) {
    return EPCTX_ERROR(kInvalidArgument, "--load-mode {} contradicts -C epctx.load_mode|{}",
                       args.load_mode, *configured);
  }
  *load_mode = !args.load_mode.empty() ? args.load_mode : configured.value_or("mmap");
  options.AddConfigEntry("epctx.load_mode", *load_mode);
  return options;
}

Result<double> TimeRun(Session& session, const Inputs& inputs) {
  Clock::time_point start = Clock::now();
  EPCTX_RETURN_IF_ERROR(session.Run(inputs).status());
  return SecondsSince(start);
}

Result<std::unique_ptr<Session>> TimeCreate(const std::string& model, const SessionOptions& options,
                                            double* seconds) {
  Clock::time_point start = Clock::now();
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<Session> s, Session::Create(model, options));
  *seconds = SecondsSince(start);
  return s;
}

Status Sample(const BlobFileId& blob, const char* step, PerfResult* r) {
  EPCTX_ASSIGN_OR_RETURN(MemorySample m, SampleMemory(0, blob, step));
  r->memory.push_back(std::move(m));
  return Status::Ok();
}

Status Evict(const ModelFiles& files, PerfResult* r) {
  EPCTX_ASSIGN_OR_RETURN(EvictionReport e, EvictModelFiles(files));
  ++r->evictions;
  if (!r->cold) r->cold = EvictionReport{};
  r->cold->confirmed = r->cold->confirmed && e.confirmed;
  for (std::string& line : e.unconfirmed) r->cold->unconfirmed.push_back(std::move(line));
  return Status::Ok();
}

// The child of --processes: one session, one run, a report, then wait to be measured.
Status RunChild(const PerfArgs& args) {
  std::string load_mode;
  EPCTX_ASSIGN_OR_RETURN(SessionOptions options, OptionsFor(args, &load_mode));
  double creation = 0;
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                         TimeCreate(args.model, options, &creation));
  EPCTX_ASSIGN_OR_RETURN(Inputs inputs, MakeInputs(args, *session));
  EPCTX_ASSIGN_OR_RETURN(double run, TimeRun(*session, inputs));
  ReportToParent(creation * 1e3, run * 1e3);
  WaitForParent();
  return Status::Ok();
}

std::vector<std::string> ChildArgs(const PerfArgs& args, const std::string& load_mode) {
  std::vector<std::string> a = {"perf", args.model, "--child", "--load-mode", load_mode};
  a.insert(a.end(), {"-x", std::to_string(args.threads)});
  if (args.generate_inputs) a.push_back("-I");
  for (const std::string& in : args.inputs) a.insert(a.end(), {"--input", in});
  for (const std::string& c : args.config) {
    if (c.rfind("epctx.load_mode|", 0) != 0) a.insert(a.end(), {"-C", c});
  }
  return a;
}

// Step 1. Returns the first session (with --cold: the last one created, which has run once).
Result<std::unique_ptr<Session>> TimeCreations(const PerfArgs& args, const SessionOptions& options,
                                               const std::optional<ModelFiles>& files,
                                               ProgressLine& progress, Inputs* inputs,
                                               BlobFileId* blob, PerfResult* r) {
  std::unique_ptr<Session> primary;
  for (int i = 0; i < args.creations; ++i) {
    if (files) {
      primary.reset();
      EPCTX_RETURN_IF_ERROR(Evict(*files, r));
    }
    double seconds = 0;
    EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<Session> s, TimeCreate(args.model, options, &seconds));
    r->creation_s.push_back(seconds);
    if (i == 0) {
      const SessionOrigin& origin = s->origin();
      r->from_context_blob = origin.from_context_blob;
      r->fallback_reason = origin.fallback_reason;
      r->blob_path = origin.blob_path;
      r->original_model = origin.original_model_path;
      *blob = IdentifyBlobFile(origin.blob_path);
      EPCTX_RETURN_IF_ERROR(Sample(*blob, "session_1_created", r));
      EPCTX_ASSIGN_OR_RETURN(*inputs, MakeInputs(args, *s));
      EPCTX_ASSIGN_OR_RETURN(r->first_inference_s, TimeRun(*s, *inputs));
      if (files) r->cold_first_run_s.push_back(r->first_inference_s);
      EPCTX_RETURN_IF_ERROR(Sample(*blob, "session_1_ran", r));
      primary = std::move(s);
    } else if (files) {
      EPCTX_ASSIGN_OR_RETURN(double run, TimeRun(*s, *inputs));
      r->cold_first_run_s.push_back(run);
      primary = std::move(s);
    }
    progress.Update(fmt::format("session creations {}/{}", i + 1, args.creations));
  }
  return primary;
}

// Step 3.
Status TimeRuns(const PerfArgs& args, Session& session, const Inputs& inputs,
                ProgressLine& progress, PerfResult* r) {
  r->test_mode = args.test_mode;
  bool by_time = args.test_mode == "duration";
  Clock::time_point start = Clock::now();
  for (int i = 0;; ++i) {
    if (by_time ? (i > 0 && SecondsSince(start) >= args.seconds) : i >= args.repeat) break;
    EPCTX_ASSIGN_OR_RETURN(double run, TimeRun(session, inputs));
    r->latency_s.push_back(run);
    progress.Update(
        by_time ? fmt::format("runs: {}, {:.0f} of {} s", i + 1, SecondsSince(start), args.seconds)
                : fmt::format("runs {}/{}", i + 1, args.repeat));
  }
  r->run_seconds = SecondsSince(start);
  return Status::Ok();
}

Status RunPerf(const PerfArgs& args) {
  if (args.child) return RunChild(args);
  PerfResult r;
  EPCTX_ASSIGN_OR_RETURN(SessionOptions options, OptionsFor(args, &r.load_mode));
  r.model = args.model;
  r.sessions = args.sessions;
  ProgressLine progress;
  std::optional<ModelFiles> files;
  if (args.cold) {
    EPCTX_ASSIGN_OR_RETURN(files, ResolveModelFiles(args.model));
  }

  BlobFileId blob;
  EPCTX_RETURN_IF_ERROR(Sample(blob, "start", &r));
  Inputs inputs;
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<Session> primary,
                         TimeCreations(args, options, files, progress, &inputs, &blob, &r));

  std::vector<std::unique_ptr<Session>> more;
  for (int count = 2; count <= args.sessions; ++count) {
    double seconds = 0;
    EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<Session> s, TimeCreate(args.model, options, &seconds));
    r.more_sessions_s.push_back(seconds);
    EPCTX_RETURN_IF_ERROR(s->Run(inputs).status());
    more.push_back(std::move(s));
    // Memory with 4, 16, 64, ... sessions on the way, and with N.
    bool power_of_4 = (count & (count - 1)) == 0 && (count & 0x55555555) != 0;
    if (power_of_4 || count == args.sessions) {
      EPCTX_RETURN_IF_ERROR(Sample(blob, fmt::format("sessions_{}_ran", count).c_str(), &r));
    }
    progress.Update(fmt::format("sessions {}/{}", count, args.sessions));
  }

  EPCTX_RETURN_IF_ERROR(TimeRuns(args, *primary, inputs, progress, &r));
  EPCTX_RETURN_IF_ERROR(Sample(blob, "after_runs", &r));
  r.peak_rss_bytes = PeakRssBytes();

  if (args.compare_original) {
    if (!r.from_context_blob || r.original_model.empty()) {
      return EPCTX_ERROR(kInvalidArgument,
                         "--compare-original needs a context model whose "
                         "original model is known and present");
    }
    for (int i = 0; i < args.creations; ++i) {
      double seconds = 0;
      EPCTX_RETURN_IF_ERROR(TimeCreate(r.original_model, options, &seconds).status());
      r.original_creation_s.push_back(seconds);
      progress.Update(fmt::format("original model creations {}/{}", i + 1, args.creations));
    }
  }

  if (args.processes > 0) {
    more.clear();
    primary.reset();
    EPCTX_ASSIGN_OR_RETURN(r.processes,
                           MeasureProcesses(ChildArgs(args, r.load_mode), args.processes, blob));
  }

  if (args.json) {
    PrintJson(r);
  } else {
    PrintText(r);
  }
  return Status::Ok();
}

}  // namespace

Command AddPerfCommand(CLI::App& parent, const GlobalOptions&) {
  auto args = std::make_shared<PerfArgs>();
  CLI::App* app =
      parent.add_subcommand("perf",
                            "Time session creation and inference, and measure memory (lines as "
                            "onnxruntime_perf_test prints them, or --json)");
  app->add_option("model", args->model, "Context model or original ONNX model")
      ->required()
      ->type_name("MODEL");
  app->add_option("--input", args->inputs, "Input tensor NAME=FILE (.npy or .pb); repeatable")
      ->type_name("NAME=FILE");
  app->add_flag("-I,--generate-inputs", args->generate_inputs,
                "Generate inputs from the model's declared shapes (unknown dims = 1; floats "
                "uniform in [-1,1), other types zero)");
  app->add_option("-m,--test-mode", args->test_mode,
                  "times: -r timed runs; duration: timed runs for -t seconds")
      ->default_val("times")
      ->check(CLI::IsMember({"times", "duration"}));
  app->add_option("-r,--repeat", args->repeat, "Timed runs after the first one (-m times)")
      ->default_val(10)
      ->check(CLI::Range(1, 1000000));
  app->add_option("-t,--time", args->seconds, "Seconds of timed runs (-m duration)")
      ->default_val(10)
      ->check(CLI::Range(0.001, 86400.0));
  app->add_option("--creations", args->creations,
                  "Session creations to time (the first loads the blob; later ones reuse it, "
                  "unless --cold)")
      ->default_val(10)
      ->check(CLI::Range(1, 100000));
  app->add_option("--sessions", args->sessions,
                  "Sessions alive together: memory is reported after 1 and after N, each having "
                  "run once")
      ->default_val(1)
      ->check(CLI::Range(1, 4096));
  app->add_option("--processes", args->processes,
                  "Also start P child processes, each creating one session and running it once, "
                  "and sum their PSS")
      ->default_val(0)
      ->check(CLI::Range(0, 256));
  app->add_flag("--cold", args->cold,
                "Before each creation, release every session and drop the context model, blob "
                "and original model from the page cache (fsync + POSIX_FADV_DONTNEED, checked "
                "with mincore)");
  app->add_option("-x,--threads", args->threads, "Kernel threads (0 = all cores)")
      ->default_val(0)
      ->check(CLI::Range(0, 1024));
  app->add_option("--load-mode", args->load_mode,
                  "epctx.load_mode: mmap (default), populate, prefetch or read")
      ->check(CLI::IsMember({"mmap", "populate", "prefetch", "read"}));
  app->add_flag("--compare-original", args->compare_original,
                "Also time session creation from the context model's original ONNX model");
  app->add_flag("--json", args->json, "Print one JSON object instead of the table");
  app->add_flag("--child", args->child, "Internal: the child process of --processes")->group("");
  AddConfigOption(*app, &args->config);
  return Command{app, [args]() { return RunPerf(*args); }};
}

}  // namespace epctx::cli
