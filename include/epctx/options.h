// The options of sessions and of the compiler (SessionOptions, ONNX Runtime's key/value
// configuration), in a header of their own: ModelCompiler takes them without depending on
// Session.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "epctx/status.h"

namespace epctx {

// String key/value configuration, with ONNX Runtime's key names where one exists. Unknown keys
// are rejected when a session or compiler is created. Keys (README "Options" has the details):
//   ep.context_enable, ep.context_file_path, ep.context_embed_mode,
//   ep.context_node_name_prefix, ep.share_ep_contexts, ep.stop_share_ep_contexts,
//   epctx.fallback ("allow" | "deny"), epctx.verify_weights ("0" | "1"),
//   epctx.allow_external_paths ("0" | "1"),
//   epctx.load_mode ("auto" | "mmap" | "populate" | "prefetch" | "read"),
//   epctx.profile_file (a path: profile the session, see Session::EndProfiling),
//   epctx.max_loop_iterations (0 = no limit), epctx.max_value_bytes (0 = no limit),
//   session.intra_op_num_threads (0 = all cores).
class SessionOptions {
 public:
  SessionOptions& AddConfigEntry(std::string key, std::string value);
  std::optional<std::string> GetConfigEntry(const std::string& key) const;
  const std::map<std::string, std::string>& config_entries() const { return entries_; }

 private:
  std::map<std::string, std::string> entries_;
};

// Checks one entry as a session or compiler would when it reads the options: an unknown key is
// refused with the list of known keys, a bad value with the accepted values. For callers that
// want the error when the entry is added rather than when it is used (the C API, Python).
Status CheckConfigEntry(const std::string& key, const std::string& value);

}  // namespace epctx
