// Sessions: load a context model (NAME_ctx.onnx) or an original ONNX model, and run it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx {

// String key/value configuration, with ONNX Runtime's key names where one exists. Unknown keys
// are rejected when a session or compiler is created. Keys (README "Options" has the details):
//   ep.context_enable, ep.context_file_path, ep.context_embed_mode,
//   ep.context_node_name_prefix, ep.share_ep_contexts, ep.stop_share_ep_contexts,
//   epctx.fallback ("allow" | "deny"), epctx.verify_weights ("0" | "1"),
//   epctx.allow_external_paths ("0" | "1"),
//   epctx.load_mode ("mmap" | "populate" | "prefetch" | "read"),
//   epctx.max_loop_iterations (0 = no limit), session.intra_op_num_threads (0 = all cores).
class SessionOptions {
 public:
  SessionOptions& AddConfigEntry(std::string key, std::string value);
  std::optional<std::string> GetConfigEntry(const std::string& key) const;
  const std::map<std::string, std::string>& config_entries() const { return entries_; }

 private:
  std::map<std::string, std::string> entries_;
};

// One model input or output as the session sees it. Unknown dims are -1; `dim_names` holds the
// symbolic name of such a dim where the model gives one (empty string otherwise).
struct ValueInfo {
  std::string name;
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;
  std::vector<std::string> dim_names;
};

// How a session came to be: from the context blob, or compiled from the original model.
struct SessionOrigin {
  bool from_context_blob = false;
  std::string context_model_path;  // empty when loaded from an original model
  std::string blob_path;           // empty when the blob was embedded or compiled in memory
  std::string original_model_path;
  std::string fallback_reason;  // why the blob was not used, when it was not
};

class SessionImpl;

// Settings of one Run call, as ONNX Runtime's RunOptions. SetTerminate may be called from any
// thread while runs using these options are in flight: each stops at its next check (before
// every node, and every Loop or Scan iteration) and returns kCancelled; runs started while the
// flag is set stop at once, until UnsetTerminate. Copies share one flag.
class RunOptions {
 public:
  RunOptions();
  void SetTerminate();
  void UnsetTerminate();
  bool terminate() const;

 private:
  friend class SessionImpl;
  std::shared_ptr<std::atomic<bool>> terminate_;
};

class Session {
 public:
  // `model_path` is a context model or an original ONNX model; which one is read from the file.
  static Result<std::unique_ptr<Session>> Create(const std::string& model_path,
                                                 const SessionOptions& options = {});
  // Model bytes from memory. For a context model, `ep.context_file_path` tells where the model
  // would live on disk, so that a blob path relative to it can be resolved.
  static Result<std::unique_ptr<Session>> CreateFromMemory(std::span<const std::byte> model_bytes,
                                                           const SessionOptions& options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  const SessionOrigin& origin() const;

  // Runs the model. Every model input must be given, with the declared dtype, rank and dims.
  // `output_names` empty means all outputs, in model order. Calls on one session are serialized.
  Result<std::vector<Tensor>> Run(const std::unordered_map<std::string, Tensor>& inputs,
                                  const std::vector<std::string>& output_names = {});
  // The same, within `run_options` (its terminate flag stops the run).
  Result<std::vector<Tensor>> Run(const RunOptions& run_options,
                                  const std::unordered_map<std::string, Tensor>& inputs,
                                  const std::vector<std::string>& output_names = {});

 private:
  explicit Session(std::unique_ptr<SessionImpl> impl);
  std::unique_ptr<SessionImpl> impl_;
};

}  // namespace epctx
