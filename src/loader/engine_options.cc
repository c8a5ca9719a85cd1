#include "loader/engine_options.h"

#include <charconv>
#include <vector>

#include "epctx/compiler.h"
#include "util/option_table.h"
#include "util/status_macros.h"

namespace epctx::loader {
namespace {

// `v` as an integer >= 0 into `out`, or the error naming option `key`.
Status ParseNonNegative(std::string_view key, const std::string& v, int64_t& out) {
  int64_t n = -1;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size() || n < 0) {
    return EPCTX_ERROR(kInvalidArgument, "option {} must be an integer >= 0, got \"{}\"", key, v);
  }
  out = n;
  return Status::Ok();
}

std::vector<OptionKey<EngineOptions>> LoaderKeys() {
  return {
      {"epctx.fallback", "allow",
       "allow|deny: compile the original model when the blob cannot "
       "serve",
       [](const std::string& v, EngineOptions& o) {
         if (v == "allow") {
           o.fallback = FallbackPolicy::kAllow;
         } else if (v == "deny") {
           o.fallback = FallbackPolicy::kDeny;
         } else {
           return EPCTX_ERROR(kInvalidArgument,
                              "option epctx.fallback must be \"allow\" or \"deny\", got \"{}\"", v);
         }
         return Status::Ok();
       }},
      {"epctx.verify_weights", "0", "1: check every weight checksum at load (reads the whole blob)",
       [](const std::string& v, EngineOptions& o) {
         EPCTX_ASSIGN_OR_RETURN(o.verify_weights, ParseBoolOption("epctx.verify_weights", v));
         return Status::Ok();
       }},
      {"epctx.allow_external_paths", "0",
       "1: a context model may name a blob or original model outside its folder (absolute or "
       "with ..)",
       [](const std::string& v, EngineOptions& o) {
         EPCTX_ASSIGN_OR_RETURN(o.allow_external_paths,
                                ParseBoolOption("epctx.allow_external_paths", v));
         return Status::Ok();
       }},
      {"epctx.load_mode", "auto",
       "how the blob is brought in: auto (mmap when the blob file's pages are in the page "
       "cache, prefetch when not: sampled with mincore at its first load in the process) | mmap "
       "(lazy) | populate (pre-faulted) | prefetch (lazy, weights read ahead by io_uring in the "
       "background) | read (io_uring reads into anonymous memory, no file mapping)",
       [](const std::string& v, EngineOptions& o) {
         for (LoadMode mode : {LoadMode::kAuto, LoadMode::kMmap, LoadMode::kPopulate,
                               LoadMode::kPrefetch, LoadMode::kRead}) {
           if (v == LoadModeName(mode)) {
             o.load_mode = mode;
             return Status::Ok();
           }
         }
         return EPCTX_ERROR(kInvalidArgument,
                            "option epctx.load_mode must be \"auto\", \"mmap\", \"populate\", "
                            "\"prefetch\" or \"read\", got \"{}\"",
                            v);
       }},
      {"epctx.profile_file", "",
       "write a profile of session creation and of every run, node by node, to this file when "
       "the session ends (Session::EndProfiling or its destruction): a Chrome-trace JSON array "
       "as ONNX Runtime's profiler writes; empty: no profiling",
       [](const std::string& v, EngineOptions& o) {
         EPCTX_ASSIGN_OR_RETURN(o.profile_file, ParsePathOption("epctx.profile_file", v));
         return Status::Ok();
       }},
      {"epctx.prepare_kernels", "background",
       "when a session makes its oneDNN primitives (generated code, once per process) and maps "
       "its activation arena and, in mmap mode, the blob's weights: background (process-wide "
       "threads, one per core, start at creation, so creation stays fast and the first run "
       "waits less) | creation "
       "(during creation, on every core: the first session of a model in a process takes "
       "longer, its first run waits for nothing) | first_run (each when a run first needs it)",
       [](const std::string& v, EngineOptions& o) {
         if (v == "background") {
           o.prepare_kernels = PrepareKernels::kBackground;
         } else if (v == "creation") {
           o.prepare_kernels = PrepareKernels::kCreation;
         } else if (v == "first_run") {
           o.prepare_kernels = PrepareKernels::kFirstRun;
         } else {
           return EPCTX_ERROR(kInvalidArgument,
                              "option epctx.prepare_kernels must be \"background\", "
                              "\"creation\" or \"first_run\", got \"{}\"",
                              v);
         }
         return Status::Ok();
       }},
      {"epctx.max_loop_iterations", "10000000",
       "iterations one Loop may run before the run stops with an error; 0 = no limit",
       [](const std::string& v, EngineOptions& o) {
         return ParseNonNegative("epctx.max_loop_iterations", v, o.max_loop_iterations);
       }},
      {"epctx.max_value_bytes", "0",
       "bytes one value made at run time may take before the run stops with an error; 0 = no "
       "limit",
       [](const std::string& v, EngineOptions& o) {
         return ParseNonNegative("epctx.max_value_bytes", v, o.max_value_bytes);
       }},
      {"session.intra_op_num_threads", "0", "threads for kernels; 0 = all cores",
       [](const std::string& v, EngineOptions& o) {
         int n = -1;
         auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
         if (ec != std::errc() || p != v.data() + v.size() || n < 0 || n > 1024) {
           return EPCTX_ERROR(kInvalidArgument,
                              "option session.intra_op_num_threads must be an "
                              "integer from 0 to 1024, got \"{}\"",
                              v);
         }
         o.intra_op_num_threads = n;
         return Status::Ok();
       }},
  };
}

// Every key: ep.context_enable, the compile's keys (the context model's placement with it), then
// the rest of session creation's.
const std::vector<OptionKey<EngineOptions>>& AllKeys() {
  static const std::vector<OptionKey<EngineOptions>> keys = [] {
    std::vector<OptionKey<EngineOptions>> all = {
        {"ep.context_enable", "0",
         "when loading an original model, also write NAME_ctx.onnx + blob",
         [](const std::string& v, EngineOptions& o) {
           EPCTX_ASSIGN_OR_RETURN(o.context_enable, ParseBoolOption("ep.context_enable", v));
           return Status::Ok();
         }}};
    for (const OptionKey<compile::CompileOptions>& k : compile::CompileOptionKeys()) {
      all.push_back({k.name, k.default_value, k.meaning,
                     [apply = k.apply](const std::string& v, EngineOptions& o) {
                       return apply(v, o.compile);
                     }});
    }
    for (OptionKey<EngineOptions>& k : LoaderKeys()) all.push_back(std::move(k));
    return all;
  }();
  return keys;
}

}  // namespace

const char* LoadModeName(LoadMode mode) {
  switch (mode) {
    case LoadMode::kAuto:
      return "auto";
    case LoadMode::kMmap:
      return "mmap";
    case LoadMode::kPopulate:
      return "populate";
    case LoadMode::kPrefetch:
      return "prefetch";
    case LoadMode::kRead:
      return "read";
  }
  return "mmap";
}

Result<EngineOptions> ParseEngineOptions(const SessionOptions& options) {
  EngineOptions out;
  EPCTX_RETURN_IF_ERROR(ApplyOptionEntries(options.config_entries(), AllKeys(), out));
  return out;
}

}  // namespace epctx::loader

namespace epctx {

std::string DescribeConfigKeys() {
  return DescribeOptionKeys(loader::AllKeys());
}

}  // namespace epctx
