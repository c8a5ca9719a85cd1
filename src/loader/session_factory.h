// How a session comes to be: from a context model's blob, or by compiling an original model,
// with the fallback from the first to the second when the blob cannot serve.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "epctx/status.h"
#include "loader/engine_options.h"
#include "loader/profiler.h"
#include "loader/session_impl.h"

namespace epctx::loader {

struct ModelSource {
  std::span<const std::byte> bytes;  // the model file's bytes (context or original)
  std::string name;                  // path, or a description for messages
  std::string dir;                   // directory relative paths resolve against ("" if none)
  std::string path;                  // the file's path; empty when given from memory
};

// `profiler` (may be null) records the steps of the creation.
Result<std::unique_ptr<SessionImpl>> CreateSession(const ModelSource& source,
                                                   const EngineOptions& options,
                                                   Profiler* profiler = nullptr);

}  // namespace epctx::loader
