// Process-wide settings and facts: logging level, blobs currently mapped.
#pragma once

#include <cstddef>

namespace epctx {

enum class LogLevel { kDebug, kInfo, kWarning, kError, kOff };

// Messages from epctx go to stderr through spdlog's "epctx" logger. Default: kWarning.
void SetLogLevel(LogLevel level);

// Number of blob files this process holds right now, mapped or read into memory (shared by all
// sessions; a file loaded with two different epctx.load_mode values counts twice).
size_t MappedBlobCount();

}  // namespace epctx
