// Pieces shared by the subcommands: the -C option, output directories, human-readable numbers.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "epctx/session.h"
#include "epctx/status.h"

namespace CLI {
class App;
}

namespace epctx::cli {

// Adds the repeatable `-C,--config "KEY|VALUE[ KEY|VALUE...]"` option (the spelling of ONNX
// Runtime's onnxruntime_perf_test and ep_weight_sharing_ctx_gen: key and value separated by '|',
// entries by spaces, so no key or value can hold a space) to `app`, collecting the raw arguments
// in `entries`. An entry without '|' or with an empty key is a usage error.
void AddConfigOption(CLI::App& app, std::vector<std::string>* entries);

// The whitespace-separated entries of one -C (or -i, -f) argument.
std::vector<std::string> SplitConfigEntries(const std::string& arg);

// The options the -C arguments describe. A key given twice is an error; unknown keys are left for
// the library to refuse.
// `given_with` says where entries come from, for the error naming a key given twice.
Result<SessionOptions> MakeSessionOptions(const std::vector<std::string>& entries,
                                          const std::string& given_with = "with -C");

// "97.8 MiB (102563840 bytes)"; small sizes as "512 bytes".
std::string FormatBytes(uint64_t bytes);
// "3.21 s", "12.4 ms", "85.0 us".
std::string FormatSeconds(double seconds);

// The clock the commands time with, and the seconds since `start` on it.
using Clock = std::chrono::steady_clock;
double SecondsSince(Clock::time_point start);

}  // namespace epctx::cli
