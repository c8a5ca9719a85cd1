// Pieces shared by the subcommands: the -C option, output directories, human-readable numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "epctx/session.h"
#include "epctx/status.h"

namespace CLI {
class App;
}

namespace epctx::cli {

// Adds the repeatable `-C,--config "KEY|VALUE"` option (ONNX Runtime's ep_weight_sharing_ctx_gen
// spelling: key and value separated by '|') to `app`, collecting the raw arguments in `entries`.
// A value without '|' or with an empty key is a usage error.
void AddConfigOption(CLI::App& app, std::vector<std::string>* entries);

// The options the -C arguments describe. A key given twice is an error; unknown keys are left for
// the library to refuse.
Result<SessionOptions> MakeSessionOptions(const std::vector<std::string>& entries);

// Creates `dir` and any missing parents.
Status CreateDirectories(const std::string& dir);

// "97.8 MiB (102563840 bytes)"; small sizes as "512 bytes".
std::string FormatBytes(uint64_t bytes);
// "3.21 s", "12.4 ms", "85.0 us".
std::string FormatSeconds(double seconds);

}  // namespace epctx::cli
