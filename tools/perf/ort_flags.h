// The onnxruntime_perf_test flags of `epctx perf` that need more than CLI11's checks (-e, -i,
// -f, -o, -r/-t choosing the mode), the flags epctx refuses and why, and the notes that say what
// an accepted flag changes here. Meanings are those of onnxruntime_perf_test's
// command_args_parser.cc and ort_test_session.cc (ONNX Runtime 1.2x).
#pragma once

#include <string>
#include <vector>

#include "epctx/status.h"
#include "perf/args.h"

namespace CLI {
class App;
}

namespace epctx::cli {

struct RefusedFlag {
  const char* name;  // "-P"
  bool takes_value;
  const char* meaning;  // in onnxruntime_perf_test
  const char* reason;   // why epctx refuses it
};
const std::vector<RefusedFlag>& RefusedFlags();

// Adds the refused flags to `app` (listed in --help with their reasons); using one is recorded
// in args->refused and refused by FinishArgs.
void AddRefusedFlags(CLI::App& app, PerfArgs* args);

// Checks and completes `args` after parsing. Returns the notes to print: what -o, -A, -M, -y,
// -c, -l, -S, -f and -n change here (or that they change nothing).
Result<std::vector<std::string>> FinishArgs(PerfArgs& args);

}  // namespace epctx::cli
