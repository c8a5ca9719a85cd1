// Session options parsed from SessionOptions' string entries: the keys session creation owns plus
// the compile's (compile/compile_options.h), parsed in one place, so every key is checked the same
// way and an unknown key is refused with the list of all known ones. ModelCompiler and Session
// both parse through here.
#pragma once

#include <cstdint>
#include <string>

#include "compile/compile_options.h"
#include "epctx/session.h"
#include "epctx/status.h"

namespace epctx::loader {

enum class FallbackPolicy { kAllow, kDeny };

// How a context blob file is brought into memory (epctx.load_mode):
//   kAuto      (default) kMmap when the file's pages are in the page cache, else kPrefetch
//              (page_residency.h); resolved by the blob registry when it first loads the file
//   kMmap      lazy shared read-only mapping; pages fault in on first use
//   kPopulate  the same mapping, pre-faulted at open (MAP_POPULATE)
//   kPrefetch  the lazy mapping, plus a background io_uring prefetch of the weights section that
//              overlaps session set-up and the first inference
//   kRead      io_uring reads (O_DIRECT where allowed) into anonymous, huge-page-advised memory;
//              no mapping of the file remains
enum class LoadMode { kAuto, kMmap, kPopulate, kPrefetch, kRead };

// "auto", "mmap", "populate", "prefetch", "read".
const char* LoadModeName(LoadMode mode);

// When a session makes its kernels' oneDNN primitives (epctx.prepare_kernels): in background
// threads started at session creation (default), during creation on every core, or on the first
// run that needs each.
enum class PrepareKernels { kBackground, kCreation, kFirstRun };

// Iterations one Loop may run before the run is stopped (epctx.max_loop_iterations); 0 lifts it.
inline constexpr int64_t kDefaultMaxLoopIterations = 10'000'000;

struct EngineOptions {
  compile::CompileOptions compile;  // what a compile reads (ep.context_file_path, ...)
  bool context_enable = false;      // ep.context_enable
  FallbackPolicy fallback = FallbackPolicy::kAllow;  // epctx.fallback
  bool verify_weights = false;                       // epctx.verify_weights
  bool allow_external_paths = false;                 // epctx.allow_external_paths
  LoadMode load_mode = LoadMode::kAuto;              // epctx.load_mode
  int intra_op_num_threads = 0;                      // session.intra_op_num_threads (0: all cores)
  int64_t max_loop_iterations = kDefaultMaxLoopIterations;  // epctx.max_loop_iterations
  int64_t max_value_bytes = 0;                              // epctx.max_value_bytes (0: no limit)
  std::string profile_file;                                 // epctx.profile_file ("": no profiling)
  PrepareKernels prepare_kernels = PrepareKernels::kBackground;  // epctx.prepare_kernels
};

Result<EngineOptions> ParseEngineOptions(const SessionOptions& options);

}  // namespace epctx::loader
