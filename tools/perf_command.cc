// `epctx perf [options...] model_path [result_file]`: onnxruntime_perf_test's command line (its
// flags keep their meanings; perf/ort_flags.h says which are refused and what the accepted ones
// change here), and its output lines and result file, so that scripts written for it run
// against epctx; plus epctx's own measurements of session creation and memory.
//
// Steps, in order (memory is sampled after each; see perf/memory.h for what is counted):
//  1. `--creations C` timed creations. The first session stays alive and runs once right away
//     (the first inference). Later creations are made while it lives, so they reuse the loaded
//     blob, as further sessions of one model do in an application; each is destroyed at once.
//     With --cold, no session is alive before a creation and the model's files are dropped from
//     the page cache first, so every creation and its first run read from storage.
//  2. `--sessions N`: sessions 2..N created and kept, each run once; memory is sampled with 4,
//     16, 64, ... sessions and with N.
//  3. Timed runs of the first session: `-m times` (`-r` runs) or `-m duration` (`-t` seconds),
//     from `-c` threads; the result file is appended to. With -p this session is profiled.
//  4. `--compare-original`: creations from the original model, timed.
//  5. `--processes P`: this process releases its sessions, then P children (this executable in a
//     hidden child mode) each create one session and run it once; their memory is summed.
// With -n, nothing runs: steps 1, 2, 4 and 5 create sessions only.

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_util.h"
#include "commands.h"
#include "epctx/session.h"
#include "perf/args.h"
#include "perf/cold.h"
#include "perf/inputs.h"
#include "perf/memory.h"
#include "perf/ort_flags.h"
#include "perf/processes.h"
#include "perf/progress.h"
#include "perf/report.h"
#include "perf/result_file.h"
#include "perf/runs.h"
#include "run_inputs.h"
#include "util/file.h"
#include "util/status_macros.h"

namespace epctx::cli {
namespace {

constexpr const char* kProfileKey = "epctx.profile_file";

uint64_t PeakRssBytes() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
}

// The session options of a run: `plain` for every session, `profiled` (plain plus
// epctx.profile_file) for the one whose runs are timed, when -p asks for a profile.
struct PerfOptions {
  SessionOptions plain;
  std::optional<SessionOptions> profiled;
  std::string load_mode;  // --load-mode, or -C "epctx.load_mode|...", or the default
};

Result<PerfOptions> OptionsFor(const PerfArgs& args) {
  EPCTX_ASSIGN_OR_RETURN(SessionOptions given, MakeSessionOptions(args.config));
  PerfOptions out;
  std::string profile = args.profile_file;
  for (const auto& [key, value] : given.config_entries()) {
    if (key != kProfileKey) {
      out.plain.AddConfigEntry(key, value);
    } else if (!profile.empty() && profile != value) {
      return EPCTX_ERROR(kInvalidArgument, "-p {} contradicts -C {}|{}", profile, key, value);
    } else {
      profile = value;
    }
  }
  if (args.threads > 0) {
    out.plain.AddConfigEntry("session.intra_op_num_threads", std::to_string(args.threads));
  }
  std::optional<std::string> configured = out.plain.GetConfigEntry("epctx.load_mode");
  if (configured && !args.load_mode.empty() && *configured != args.load_mode) {
    return EPCTX_ERROR(kInvalidArgument, "--load-mode {} contradicts -C epctx.load_mode|{}",
                       args.load_mode, *configured);
  }
  out.load_mode = !args.load_mode.empty() ? args.load_mode : configured.value_or("auto");
  out.plain.AddConfigEntry("epctx.load_mode", out.load_mode);
  if (!profile.empty()) {
    out.profiled = out.plain;
    out.profiled->AddConfigEntry(kProfileKey, profile);
  }
  return out;
}

// From the path, or with -l as onnxruntime_perf_test's -l does: the file read into memory (inside
// the timed creation) and handed over as bytes, ep.context_file_path telling where it lives.
Result<std::unique_ptr<Session>> CreateSession(const PerfArgs& args, const std::string& model,
                                               const SessionOptions& options) {
  if (!args.from_memory) return Session::Create(model, options);
  EPCTX_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(model));
  SessionOptions with_path = options;
  if (!with_path.GetConfigEntry("ep.context_file_path")) {
    with_path.AddConfigEntry("ep.context_file_path", model);
  }
  return Session::CreateFromMemory(std::as_bytes(std::span(bytes.data(), bytes.size())), with_path);
}

Result<std::unique_ptr<Session>> TimeCreate(const PerfArgs& args, const std::string& model,
                                            const SessionOptions& options, double* seconds) {
  Clock::time_point start = Clock::now();
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<Session> s, CreateSession(args, model, options));
  *seconds = SecondsSince(start);
  return s;
}

// Page faults of the process so far, every thread's (getrusage RUSAGE_SELF).
struct ProcessFaults {
  int64_t minor = 0;
  int64_t major = 0;
};
ProcessFaults CountProcessFaults() {
  struct rusage usage {};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return {};
  return {usage.ru_minflt, usage.ru_majflt};
}

Result<double> TimeRun(Session& session, const Inputs& inputs) {
  Clock::time_point start = Clock::now();
  EPCTX_RETURN_IF_ERROR(session.Run(inputs).status());
  return SecondsSince(start);
}

// The inputs of the runs, and what they are in `used`.
Result<Inputs> MakeInputs(const PerfArgs& args, const Session& session, PerfResult* r) {
  Inputs inputs;
  if (args.generate_inputs) {
    EPCTX_ASSIGN_OR_RETURN(inputs, GenerateInputs(session.inputs(), args.free_dims, args.seed));
    for (const std::string& name : UnusedFreeDims(session.inputs(), args.free_dims)) {
      r->notes.push_back(
          fmt::format("-f {}: no input of the model has a free dimension named so", name));
    }
  } else {
    EPCTX_ASSIGN_OR_RETURN(inputs, LoadInputs(session.inputs(), args.inputs));
  }
  for (const ValueInfo& v : session.inputs()) {
    const Tensor& t = inputs.at(v.name);
    r->inputs.push_back({v.name, DataTypeName(t.dtype()), t.shape(), args.generate_inputs});
  }
  return inputs;
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

// The child of --processes: one session, one run (none with -n), a report, then wait to be
// measured.
Status RunChild(const PerfArgs& args) {
  EPCTX_ASSIGN_OR_RETURN(PerfOptions options, OptionsFor(args));
  double creation = 0;
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                         TimeCreate(args, args.model, options.plain, &creation));
  double run = 0;
  if (!args.exit_after_creation) {
    PerfResult unused;
    EPCTX_ASSIGN_OR_RETURN(Inputs inputs, MakeInputs(args, *session, &unused));
    EPCTX_ASSIGN_OR_RETURN(run, TimeRun(*session, inputs));
  }
  ReportToParent(creation * 1e3, run * 1e3);
  WaitForParent();
  return Status::Ok();
}

// The children's command line: what bears on creating a session and running it once, without
// the profile (only the parent's timed session is profiled).
std::vector<std::string> ChildArgs(const PerfArgs& args, const std::string& load_mode) {
  std::vector<std::string> a = {"perf", args.model, "--child", "--load-mode", load_mode};
  a.insert(a.end(), {"-x", std::to_string(args.threads), "-S", std::to_string(args.seed)});
  if (args.generate_inputs) a.push_back("-I");
  if (args.from_memory) a.push_back("-l");
  if (args.exit_after_creation) a.push_back("-n");
  for (const std::string& f : args.free_dim_args) a.insert(a.end(), {"-f", f});
  for (const std::string& in : args.inputs) a.insert(a.end(), {"--input", in});
  for (const std::string& c : args.config) {
    for (const std::string& entry : SplitConfigEntries(c)) {
      if (entry.rfind("epctx.load_mode|", 0) != 0 && entry.rfind(kProfileKey, 0) != 0) {
        a.insert(a.end(), {"-C", entry});
      }
    }
  }
  return a;
}

// Step 1. Returns the first session (with --cold: the last one created, which has run once).
Result<std::unique_ptr<Session>> TimeCreations(const PerfArgs& args, const PerfOptions& options,
                                               const std::optional<ModelFiles>& files,
                                               ProgressLine& progress, Inputs* inputs,
                                               BlobFileId* blob, PerfResult* r) {
  const bool run = !args.exit_after_creation;
  // The session whose runs are timed is the one profiled.
  const int profiled = files ? args.creations - 1 : 0;
  std::unique_ptr<Session> primary;
  for (int i = 0; i < args.creations; ++i) {
    if (files) {
      primary.reset();
      EPCTX_RETURN_IF_ERROR(Evict(*files, r));
    }
    const SessionOptions& o = options.profiled && i == profiled ? *options.profiled : options.plain;
    double seconds = 0;
    EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<Session> s, TimeCreate(args, args.model, o, &seconds));
    r->creation_s.push_back(seconds);
    if (i == 0) {
      const SessionOrigin& origin = s->origin();
      r->from_context_blob = origin.from_context_blob;
      r->fallback_reason = origin.fallback_reason;
      r->blob_path = origin.blob_path;
      if (!origin.load_mode.empty()) r->load_mode = origin.load_mode;  // auto resolved
      r->original_model = origin.original_model_path;
      r->context_model_path = origin.context_model_path;
      *blob = IdentifyBlobFile(origin.blob_path);
      EPCTX_RETURN_IF_ERROR(Sample(*blob, "session_1_created", r));
      if (run) {
        EPCTX_ASSIGN_OR_RETURN(*inputs, MakeInputs(args, *s, r));
        const ProcessFaults before = CountProcessFaults();
        EPCTX_ASSIGN_OR_RETURN(r->first_inference_s, TimeRun(*s, *inputs));
        const ProcessFaults after = CountProcessFaults();
        r->first_inference_minor_faults = after.minor - before.minor;
        r->first_inference_major_faults = after.major - before.major;
        if (files) r->cold_first_run_s.push_back(r->first_inference_s);
        EPCTX_RETURN_IF_ERROR(Sample(*blob, "session_1_ran", r));
      }
      primary = std::move(s);
    } else if (files) {
      if (run) {
        EPCTX_ASSIGN_OR_RETURN(double seconds_run, TimeRun(*s, *inputs));
        r->cold_first_run_s.push_back(seconds_run);
      }
      primary = std::move(s);
    }
    progress.Update(fmt::format("session creations {}/{}", i + 1, args.creations));
  }
  return primary;
}

// Step 2.
Status KeepMoreSessions(const PerfArgs& args, const PerfOptions& options, const Inputs& inputs,
                        const BlobFileId& blob, ProgressLine& progress,
                        std::vector<std::unique_ptr<Session>>* more, PerfResult* r) {
  for (int count = 2; count <= args.sessions; ++count) {
    double seconds = 0;
    EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<Session> s,
                           TimeCreate(args, args.model, options.plain, &seconds));
    r->more_sessions_s.push_back(seconds);
    if (!args.exit_after_creation) EPCTX_RETURN_IF_ERROR(s->Run(inputs).status());
    more->push_back(std::move(s));
    // Memory with 4, 16, 64, ... sessions on the way, and with N.
    bool power_of_4 = (count & (count - 1)) == 0 && (count & 0x55555555) != 0;
    if (power_of_4 || count == args.sessions) {
      const char* state = args.exit_after_creation ? "created" : "ran";
      EPCTX_RETURN_IF_ERROR(Sample(blob, fmt::format("sessions_{}_{}", count, state).c_str(), r));
    }
    progress.Update(fmt::format("sessions {}/{}", count, args.sessions));
  }
  return Status::Ok();
}

// Step 3, and the result file.
Status TimeRunsOf(const PerfArgs& args, Session& session, const Inputs& inputs,
                  ProgressLine& progress, PerfResult* r) {
  RunPlan plan;
  plan.by_time = args.test_mode == "duration";
  plan.repeat = args.repeat;
  plan.seconds = args.seconds;
  plan.concurrent = args.concurrent;
  if (args.verbosity > 0) plan.verbose_out = args.json ? stderr : stdout;
  EPCTX_ASSIGN_OR_RETURN(RunTiming timing, TimeRuns(session, inputs, plan, progress));
  r->latency_s = std::move(timing.latency_s);
  r->run_seconds = timing.wall_s;
  r->requests_per_thread = std::move(timing.requests_per_thread);
  r->cpu_usage_percent = timing.cpu_usage_percent;
  r->peak_rss_bytes = PeakRssBytes();
  if (!args.result_file.empty()) {
    EPCTX_RETURN_IF_ERROR(AppendResultFile(args.result_file, ResultModelName(args.model),
                                           r->latency_s, r->peak_rss_bytes, r->cpu_usage_percent,
                                           args.statistics));
    r->result_file = args.result_file;
  }
  return Status::Ok();
}

Status RunPerf(PerfArgs args) {
  EPCTX_ASSIGN_OR_RETURN(std::vector<std::string> notes, FinishArgs(args));
  if (args.child) return RunChild(args);
  if (args.generate_inputs && !args.inputs.empty()) {
    return EPCTX_ERROR(kInvalidArgument, "give inputs either with --input or with -I, not both");
  }
  PerfResult r;
  r.notes = std::move(notes);
  EPCTX_ASSIGN_OR_RETURN(PerfOptions options, OptionsFor(args));
  r.load_mode = options.load_mode;
  r.load_mode_option = options.load_mode;
  r.session_config = options.plain.config_entries();
  r.model = args.model;
  r.sessions = args.sessions;
  r.exit_after_creation = args.exit_after_creation;
  r.from_memory = args.from_memory;
  r.test_mode = args.test_mode;
  r.concurrent = args.concurrent;
  r.statistics = args.statistics;
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
  EPCTX_RETURN_IF_ERROR(KeepMoreSessions(args, options, inputs, blob, progress, &more, &r));

  if (!args.exit_after_creation) {
    EPCTX_RETURN_IF_ERROR(TimeRunsOf(args, *primary, inputs, progress, &r));
    EPCTX_RETURN_IF_ERROR(Sample(blob, "after_runs", &r));
  }
  if (args.exit_after_creation) r.peak_rss_bytes = PeakRssBytes();
  EPCTX_ASSIGN_OR_RETURN(r.profile_file, primary->EndProfiling());

  if (args.compare_original) {
    if (!r.from_context_blob || r.original_model.empty()) {
      return EPCTX_ERROR(kInvalidArgument,
                         "--compare-original needs a context model whose "
                         "original model is known and present");
    }
    for (int i = 0; i < args.creations; ++i) {
      double seconds = 0;
      EPCTX_RETURN_IF_ERROR(TimeCreate(args, r.original_model, options.plain, &seconds).status());
      r.original_creation_s.push_back(seconds);
      progress.Update(fmt::format("original model creations {}/{}", i + 1, args.creations));
    }
  }

  if (args.processes > 0) {
    more.clear();
    primary.reset();
    EPCTX_ASSIGN_OR_RETURN(
        r.processes, MeasureProcesses(ChildArgs(args, r.load_mode_option), args.processes, blob));
  }

  if (args.json) {
    PrintJson(r);
  } else {
    PrintText(r);
  }
  return Status::Ok();
}

// onnxruntime_perf_test's flags, with its meanings.
void AddOrtFlags(CLI::App& app, PerfArgs& a) {
  app.add_option("-m,--test-mode", a.test_mode,
                 "times: -r timed runs; duration: timed runs for -t seconds (an explicit -r "
                 "selects times, an explicit -t duration, as in onnxruntime_perf_test)")
      ->default_val("times")
      ->check(CLI::IsMember({"times", "duration"}));
  app.add_option("-r,--repeat", a.repeat, "Timed runs after the first one, in times mode")
      ->default_val(10)
      ->check(CLI::Range(1, 1000000));
  app.add_option("-t,--time", a.seconds, "Seconds of timed runs, in duration mode")
      ->default_val(10)
      ->check(CLI::Range(0.001, 86400.0));
  app.add_option("-e,--provider", a.provider,
                 "Execution provider: only cpu (epctx's own kernels); any other is refused")
      ->default_val("cpu");
  app.add_flag("-I,--generate-inputs", a.generate_inputs,
               "Generate the inputs from the model's declared shapes (free dimensions 1 unless "
               "-f overrides them; zeros, or random with -S)");
  app.add_option("-f,--free-dim", a.free_dim_args,
                 "Free dimension override of generated inputs, \"NAME:VALUE\" (value > 0); "
                 "several in one argument separated by spaces, and repeatable")
      ->type_name("\"NAME:VALUE ...\"")
      ->allow_extra_args(false);
  app.add_option("-S,--seed", a.seed,
                 "Seed of the generated inputs: float32 uniform in [0,5), int8/uint8 uniform "
                 "over [0,max], other types zero; -1: all zeros")
      ->default_val(-1);
  app.add_option("-x,--threads", a.threads,
                 "Intra-op threads (session.intra_op_num_threads): kernel threads; 0 = all cores")
      ->default_val(0)
      ->check(CLI::Range(0, 1024));
  app.add_option("-y,--inter-op-threads", a.inter_op_threads,
                 "Inter-op threads: accepted, changes nothing (epctx runs nodes one at a time)")
      ->default_val(0)
      ->check(CLI::Range(0, 1024));
  app.add_option("-c,--concurrent", a.concurrent,
                 "Runs submitted at once to the one session, from as many threads (epctx "
                 "serializes them, so they queue)")
      ->default_val(1)
      ->check(CLI::Range(1, 1024));
  app.add_flag("-n,--exit-after-creation", a.exit_after_creation,
               "Create the sessions and run nothing (session creation benchmark)");
  app.add_flag("-l,--from-memory", a.from_memory,
               "Read the model file into memory and create sessions from the bytes "
               "(Session::CreateFromMemory, ep.context_file_path = the model's path)");
  app.add_option("-i,--provider-options", a.provider_options,
                 "Provider options \"KEY|VALUE ...\": refused, as the CPU provider takes none")
      ->allow_extra_args(false);
  app.add_flag("-s,--statistics", a.statistics,
               "Latency statistics (min, max, P50..P999), also appended to the result file; on "
               "without a result file");
  app.add_option("-o,--optimization-level", a.optimization_level,
                 "Graph optimization level 0, 1, 2, 3 or 99: accepted, changes nothing (epctx "
                 "always runs its own compile passes)")
      ->default_val(99);
  app.add_flag("-A,--disable-arena", a.disable_arena,
               "Disable the memory arena: accepted, changes nothing (the activation arena and the "
               "run-time value buffers cannot be turned off)");
  app.add_flag("-M,--disable-memory-pattern", a.disable_memory_pattern,
               "Disable the memory pattern: accepted, changes nothing (the memory plan is "
               "compiled into the program)");
  app.add_option("-p,--profile", a.profile_file,
                 "Profile the timed session node by node into this file (ONNX Runtime's "
                 "profiler format, Chrome trace JSON; same as -C \"epctx.profile_file|FILE\")")
      ->type_name("FILE");
  AddConfigOption(app, &a.config);
  AddRefusedFlags(app, &a);
}

// epctx's own flags.
void AddEpctxFlags(CLI::App& app, PerfArgs& a) {
  const std::string group = "epctx";
  app.add_option("--input", a.inputs, "Input tensor NAME=FILE (.npy or .pb); repeatable")
      ->type_name("NAME=FILE")
      ->allow_extra_args(false)
      ->group(group);
  app.add_option("--creations", a.creations,
                 "Session creations to time (the first loads the blob; later ones reuse it, "
                 "unless --cold)")
      ->default_val(10)
      ->check(CLI::Range(1, 100000))
      ->group(group);
  app.add_option("--sessions", a.sessions,
                 "Sessions alive together: memory is reported after 1 and after N, each having "
                 "run once")
      ->default_val(1)
      ->check(CLI::Range(1, 4096))
      ->group(group);
  app.add_option("--processes", a.processes,
                 "Also start P child processes, each creating one session and running it once, "
                 "and sum their PSS")
      ->default_val(0)
      ->check(CLI::Range(0, 256))
      ->group(group);
  app.add_flag("--cold", a.cold,
               "Before each creation, release every session and drop the context model, blob "
               "and original model from the page cache (fsync + POSIX_FADV_DONTNEED, checked "
               "with mincore)")
      ->group(group);
  app.add_option("--load-mode", a.load_mode,
                 "epctx.load_mode: auto (default: mmap when the blob is in the page cache, "
                 "prefetch when not), mmap, populate, prefetch or read")
      ->check(CLI::IsMember({"auto", "mmap", "populate", "prefetch", "read"}))
      ->group(group);
  app.add_flag("--compare-original", a.compare_original,
               "Also time session creation from the context model's original ONNX model")
      ->group(group);
  app.add_flag("--json", a.json, "Print one JSON object instead of the lines")->group(group);
  app.add_flag("--child", a.child, "Internal: the child process of --processes")->group("");
}

}  // namespace

Command AddPerfCommand(CLI::App& parent, const GlobalOptions& global) {
  auto args = std::make_shared<PerfArgs>();
  CLI::App* app = parent.add_subcommand(
      "perf",
      "Time session creation and inference, and measure memory: onnxruntime_perf_test's command "
      "line ([options...] model_path [result_file]), output lines and result file (or --json). "
      "-v prints each run's time");
  app->add_option("model", args->model, "Context model or original ONNX model")
      ->required()
      ->type_name("MODEL");
  app->add_option("result_file", args->result_file,
                  "Append each timed run to this file as onnxruntime_perf_test does "
                  "(model,seconds,peak working set,CPU %,run)")
      ->type_name("RESULT_FILE");
  AddOrtFlags(*app, *args);
  AddEpctxFlags(*app, *args);
  CLI::App* raw = app;
  const GlobalOptions* g = &global;
  return Command{app, [args, raw, g]() {
                   PerfArgs a = *args;
                   a.repeat_given = raw->count("-r") > 0;
                   a.seconds_given = raw->count("-t") > 0;
                   a.verbosity = g->verbosity;
                   return RunPerf(std::move(a));
                 }};
}

}  // namespace epctx::cli
