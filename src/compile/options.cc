#include "compile/options.h"

#include <charconv>
#include <functional>
#include <vector>

#include "util/status_macros.h"

namespace epctx::compile {
namespace {

struct Key {
  const char* name;
  const char* default_value;
  const char* meaning;
  std::function<Status(const std::string&, EngineOptions&)> apply;
};

Result<bool> ParseBool(const std::string& key, const std::string& v) {
  if (v == "1") return true;
  if (v == "0") return false;
  return EPCTX_ERROR(kInvalidArgument, "option {} must be \"0\" or \"1\", got \"{}\"", key, v);
}

const std::vector<Key>& Keys() {
  static const std::vector<Key> keys = {
      {"ep.context_enable", "0", "when loading an original model, also write NAME_ctx.onnx + blob",
       [](const std::string& v, EngineOptions& o) {
         EPCTX_ASSIGN_OR_RETURN(o.context_enable, ParseBool("ep.context_enable", v));
         return Status::Ok();
       }},
      {"ep.context_file_path", "",
       "where the context model is written, or, for a model loaded "
       "from memory, where it lives (to resolve the blob path)",
       [](const std::string& v, EngineOptions& o) {
         o.context_file_path = v;
         return Status::Ok();
       }},
      {"ep.context_embed_mode", "0", "1: put the blob bytes inside the context model (limit 1 GiB)",
       [](const std::string& v, EngineOptions& o) {
         EPCTX_ASSIGN_OR_RETURN(o.embed_mode, ParseBool("ep.context_embed_mode", v));
         return Status::Ok();
       }},
      {"ep.context_node_name_prefix", "", "prefix of EPContext node names",
       [](const std::string& v, EngineOptions& o) {
         o.node_name_prefix = v;
         return Status::Ok();
       }},
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
         EPCTX_ASSIGN_OR_RETURN(o.verify_weights, ParseBool("epctx.verify_weights", v));
         return Status::Ok();
       }},
      {"epctx.allow_external_paths", "0",
       "1: a context model may name a blob or original model outside its folder (absolute or "
       "with ..)",
       [](const std::string& v, EngineOptions& o) {
         EPCTX_ASSIGN_OR_RETURN(o.allow_external_paths, ParseBool("epctx.allow_external_paths", v));
         return Status::Ok();
       }},
      {"epctx.load_mode", "mmap",
       "how the blob is brought in: mmap (lazy) | populate (pre-faulted) | prefetch (lazy, "
       "weights read ahead by io_uring in the background) | read (io_uring reads into "
       "anonymous memory, no file mapping)",
       [](const std::string& v, EngineOptions& o) {
         for (LoadMode mode :
              {LoadMode::kMmap, LoadMode::kPopulate, LoadMode::kPrefetch, LoadMode::kRead}) {
           if (v == LoadModeName(mode)) {
             o.load_mode = mode;
             return Status::Ok();
           }
         }
         return EPCTX_ERROR(kInvalidArgument,
                            "option epctx.load_mode must be \"mmap\", \"populate\", "
                            "\"prefetch\" or \"read\", got \"{}\"",
                            v);
       }},
      {"ep.share_ep_contexts", "0",
       "compile: this model joins the process's shared blob, "
       "written by the call that sets ep.stop_share_ep_contexts",
       [](const std::string& v, EngineOptions& o) {
         EPCTX_ASSIGN_OR_RETURN(o.share_ep_contexts, ParseBool("ep.share_ep_contexts", v));
         return Status::Ok();
       }},
      {"ep.stop_share_ep_contexts", "0",
       "compile: this is the last model of the shared blob; "
       "write it",
       [](const std::string& v, EngineOptions& o) {
         EPCTX_ASSIGN_OR_RETURN(o.stop_share_ep_contexts,
                                ParseBool("ep.stop_share_ep_contexts", v));
         return Status::Ok();
       }},
      {"epctx.profile_file", "",
       "write a profile of session creation and of every run, node by node, to this file when "
       "the session ends (Session::EndProfiling or its destruction): a Chrome-trace JSON array "
       "as ONNX Runtime's profiler writes; empty: no profiling",
       [](const std::string& v, EngineOptions& o) {
         o.profile_file = v;
         return Status::Ok();
       }},
      {"epctx.target_isa", "native",
       "compile: the CPU tier the weights are packed for: native (this CPU's) | avx2 | "
       "avx512_core; a lower tier makes blobs for older CPUs (chosen once per process, before its "
       "first compile or session)",
       [](const std::string& v, EngineOptions& o) {
         if (v != "native" && v != "avx2" && v != "avx512_core") {
           return EPCTX_ERROR(kInvalidArgument,
                              "option epctx.target_isa must be \"native\", \"avx2\" or "
                              "\"avx512_core\", got \"{}\"",
                              v);
         }
         o.target_isa = v;
         return Status::Ok();
       }},
      {"epctx.prepare_kernels", "background",
       "when a session makes its oneDNN primitives (generated code, once per process): "
       "background (process-wide threads, one per core, start at creation, so creation stays fast "
       "and the first run waits less) | creation (during creation, on every core: the first "
       "session of a model in a process takes longer, its first run waits for nothing) | "
       "first_run (each when a run first needs it)",
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
         int64_t n = -1;
         auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
         if (ec != std::errc() || p != v.data() + v.size() || n < 0) {
           return EPCTX_ERROR(kInvalidArgument,
                              "option epctx.max_loop_iterations must be an integer >= 0, got "
                              "\"{}\"",
                              v);
         }
         o.max_loop_iterations = n;
         return Status::Ok();
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
  return keys;
}

}  // namespace

const char* LoadModeName(LoadMode mode) {
  switch (mode) {
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
  for (const auto& [key, value] : options.config_entries()) {
    const Key* found = nullptr;
    for (const Key& k : Keys()) {
      if (key == k.name) found = &k;
    }
    if (found == nullptr) {
      std::string known;
      for (const Key& k : Keys()) known += std::string(known.empty() ? "" : ", ") + k.name;
      return EPCTX_ERROR(kInvalidArgument, "unknown option \"{}\" (known: {})", key, known);
    }
    EPCTX_RETURN_IF_ERROR(found->apply(value, out));
  }
  return out;
}

std::string DescribeEngineOptions() {
  std::string out;
  for (const Key& k : Keys()) {
    out += fmt::format("  {} (default \"{}\"): {}\n", k.name, k.default_value, k.meaning);
  }
  return out;
}

}  // namespace epctx::compile
