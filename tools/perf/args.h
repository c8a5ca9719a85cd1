// The command line of `epctx perf`: onnxruntime_perf_test's flags, with their meanings, plus
// epctx's own (long names). Filled by CLI11 in perf_command.cc, then checked by FinishArgs
// (perf/ort_flags.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace epctx::cli {

struct PerfArgs {
  std::string model;
  std::string result_file;  // onnxruntime_perf_test's optional second positional

  // Inputs: files (--input), or generated (-I, shaped by -f, filled as -S says).
  std::vector<std::string> inputs;
  bool generate_inputs = false;              // -I
  std::vector<std::string> free_dim_args;    // -f "name:value[ name:value...]", repeatable
  std::map<std::string, int64_t> free_dims;  // parsed from free_dim_args
  int seed = -1;                             // -S; -1: generated inputs are zeros

  // Timed runs.
  std::string test_mode = "times";  // -m; -r selects "times" and -t "duration", as ORT
  bool repeat_given = false;
  bool seconds_given = false;
  int repeat = 10;      // -r
  double seconds = 10;  // -t
  int concurrent = 1;   // -c

  // Sessions.
  std::string provider = "cpu";               // -e
  std::vector<std::string> provider_options;  // -i
  std::vector<std::string> config;            // -C, each "k|v[ k|v...]", repeatable
  int threads = 0;                            // -x: session.intra_op_num_threads
  int inter_op_threads = 0;                   // -y
  int optimization_level = 99;                // -o
  bool disable_arena = false;                 // -A
  bool disable_memory_pattern = false;        // -M
  bool from_memory = false;                   // -l
  bool exit_after_creation = false;           // -n
  std::string load_mode;                      // --load-mode; empty: -C epctx.load_mode or auto
  std::string profile_file;                   // -p

  // Output.
  bool statistics = false;  // -s; on when there is no result file, as ORT
  bool json = false;        // --json
  int verbosity = 0;        // -v (the global flag)

  // epctx's own measurements.
  int creations = 10;
  int sessions = 1;
  int processes = 0;
  bool cold = false;
  bool compare_original = false;
  bool child = false;  // internal: a child of --processes

  // onnxruntime_perf_test flags epctx refuses, as given (see RefusedFlags()).
  std::vector<std::string> refused;
};

}  // namespace epctx::cli
