// Process-wide settings and facts: logging level, blobs currently mapped, the engine's version.
#pragma once

#include <cstddef>

namespace epctx {

enum class LogLevel { kDebug, kInfo, kWarning, kError, kOff };

// Messages from epctx go to stderr through spdlog's "epctx" logger. Default: kWarning.
void SetLogLevel(LogLevel level);

// Number of blob files this process holds right now, mapped or read into memory (shared by all
// sessions; a file loaded with two different epctx.load_mode values counts twice).
size_t MappedBlobCount();

// The engine's version ("0.1.0"), as the library in use was built.
const char* EngineVersion();

}  // namespace epctx
