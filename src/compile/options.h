// Session and compile options parsed from SessionOptions' string entries, in one place, so every
// key is checked the same way and unknown keys are refused with the list of known ones.
#pragma once

#include <cstdint>
#include <string>

#include "epctx/session.h"
#include "epctx/status.h"

namespace epctx::compile {

enum class FallbackPolicy { kAllow, kDeny };

// How a context blob file is brought into memory (epctx.load_mode):
//   kMmap      lazy shared read-only mapping; pages fault in on first use (default)
//   kPopulate  the same mapping, pre-faulted at open (MAP_POPULATE)
//   kPrefetch  the lazy mapping, plus a background io_uring prefetch of the weights section that
//              overlaps session set-up and the first inference
//   kRead      io_uring reads (O_DIRECT where allowed) into anonymous, huge-page-advised memory;
//              no mapping of the file remains
enum class LoadMode { kMmap, kPopulate, kPrefetch, kRead };

// "mmap", "populate", "prefetch", "read".
const char* LoadModeName(LoadMode mode);

// When a session makes its kernels' oneDNN primitives (epctx.prepare_kernels): in background
// threads started at session creation (default), during creation on every core, or on the first
// run that needs each.
enum class PrepareKernels { kBackground, kCreation, kFirstRun };

// Iterations one Loop may run before the run is stopped (epctx.max_loop_iterations); 0 lifts it.
inline constexpr int64_t kDefaultMaxLoopIterations = 10'000'000;

struct EngineOptions {
  bool context_enable = false;                       // ep.context_enable
  std::string context_file_path;                     // ep.context_file_path
  bool embed_mode = false;                           // ep.context_embed_mode
  std::string node_name_prefix;                      // ep.context_node_name_prefix
  FallbackPolicy fallback = FallbackPolicy::kAllow;  // epctx.fallback
  bool verify_weights = false;                       // epctx.verify_weights
  bool allow_external_paths = false;                 // epctx.allow_external_paths
  LoadMode load_mode = LoadMode::kMmap;              // epctx.load_mode
  int intra_op_num_threads = 0;                      // session.intra_op_num_threads (0: all cores)
  int64_t max_loop_iterations = kDefaultMaxLoopIterations;  // epctx.max_loop_iterations
  bool share_ep_contexts = false;                           // ep.share_ep_contexts
  bool stop_share_ep_contexts = false;                      // ep.stop_share_ep_contexts
  std::string profile_file;                                 // epctx.profile_file ("": no profiling)
  std::string target_isa = "native";  // epctx.target_isa: native, avx2, avx512_core
  PrepareKernels prepare_kernels = PrepareKernels::kBackground;  // epctx.prepare_kernels
};

Result<EngineOptions> ParseEngineOptions(const SessionOptions& options);

// "key (default): meaning" lines for --help.
std::string DescribeEngineOptions();

}  // namespace epctx::compile
