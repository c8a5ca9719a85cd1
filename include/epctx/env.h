// Process-wide settings and facts: logging level, blobs currently mapped.
#pragma once

#include <cstddef>

namespace epctx {

enum class LogLevel { kDebug, kInfo, kWarning, kError, kOff };

// Messages from epctx go to stderr through spdlog's "epctx" logger. Default: kWarning.
void SetLogLevel(LogLevel level);

// Number of distinct blob files this process has mapped right now (shared by all sessions).
size_t MappedBlobCount();

}  // namespace epctx
