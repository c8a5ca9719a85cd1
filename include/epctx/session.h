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

#include "epctx/options.h"
#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx {

// One model input or output as the session sees it. Unknown dims are -1; `dim_names` holds the
// symbolic name of such a dim where the model gives one (empty string otherwise).
struct ValueInfo {
  std::string name;
  // kTensor or kSequence (dtype is then the element type, shape empty); `optional`: an ONNX
  // optional of that kind, which a run may be given or return as ValueKind::kNone.
  ValueKind kind = ValueKind::kTensor;
  bool optional = false;
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;
  std::vector<std::string> dim_names;
};

// How a session came to be: from the context blob, or compiled from the original model.
struct SessionOrigin {
  bool from_context_blob = false;
  std::string context_model_path;  // empty when loaded from an original model
  std::string blob_path;           // empty when the blob was embedded or compiled in memory
  // How the blob file was brought into memory: "mmap", "populate", "prefetch" or "read" (what
  // epctx.load_mode=auto chose, when it was auto); empty when there is no blob file.
  std::string load_mode;
  std::string original_model_path;
  std::string fallback_reason;  // why the blob was not used, when it was not
};

// A declared shape as text: "[batch,4]", with "?" for an unnamed unknown dim.
std::string ShapeToString(const ValueInfo& value);

// Session::Run's check of a tensor given for the input `declared`, ONNX Runtime's rule (its
// InferenceSession::ValidateInputs): the element type must be the declared one; an input declared
// without a shape, or as a scalar (rank 0), takes a tensor of any shape; otherwise the rank must be
// the declared rank and every static dim the declared size, while a symbolic or unknown dim takes
// any size; a bool tensor's bytes must be 0 or 1. The error names the input (or `subject`, when
// given), what is expected and what was given.
Status CheckInput(const ValueInfo& declared, const Tensor& given, const std::string& subject = "");

// Model-level facts of the file the session was created from (ONNX ModelProto fields). For a
// context model they are the context model's: producer "epctx", the original graph's name, and
// the metadata recording the original model.
struct ModelMetadata {
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::string graph_name;
  std::string graph_doc_string;
  std::map<std::string, std::string> custom_metadata;  // metadata_props
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
  const ModelMetadata& metadata() const;

  // Runs the model. Every model input must be given and pass CheckInput.
  // `output_names` empty means all outputs, in model order. Calls on one session are serialized.
  // The returned tensors own their memory (nothing aliases the session, its arena or the blob), so
  // they may outlive the session and be handed to another owner without a copy.
  Result<std::vector<Tensor>> Run(const std::unordered_map<std::string, Tensor>& inputs,
                                  const std::vector<std::string>& output_names = {});
  // The same, within `run_options` (its terminate flag stops the run).
  Result<std::vector<Tensor>> Run(const RunOptions& run_options,
                                  const std::unordered_map<std::string, Tensor>& inputs,
                                  const std::vector<std::string>& output_names = {});

  // Runs into outputs the caller binds, as ONNX Runtime's IOBinding does: `outputs` names the
  // outputs wanted (unknown names are refused). A tensor there is the caller's memory (a
  // Tensor::View of writable memory, or a Tensor::Allocate'd tensor the caller keeps) of the
  // output's element type and exact shape: the run writes the output into it, and it stays as
  // given. An empty Tensor() has the run allocate the output and receives it, as from Run
  // (memory of its own). A bound tensor is checked against the declaration as inputs are
  // (CheckInput, naming "output '<name>'"); the node that makes it must ask for exactly its type
  // and shape, or the run fails naming the output and both shapes (ONNX Runtime refuses a
  // pre-allocated output of another shape too). On failure bound memory may be partly written.
  //
  // A bound output may be an input's memory: a decode loop binds past_key and present_key to one
  // buffer of max_sequence_length rows (ONNX Runtime's shared past/present buffer), and
  // com.microsoft GroupQueryAttention then writes only the new rows, in place. The rule that
  // keeps such aliasing safe: the node that makes the output writes it into the bound memory
  // only if no node after it reads that input (or a view of it), no output returns the input,
  // and, when the node itself reads it, the bound memory is exactly that input's and its kernel
  // is one that writes that output over that input (GroupQueryAttention: both presents over
  // both pasts). Otherwise the output is computed in the session's memory and copied into the
  // bound memory after the last node, once every reader has seen the input unchanged (a
  // profiled run's model_run event counts those bytes as output_bytes_copied). Outputs bound to
  // overlapping memory are refused.
  Status Run(const RunOptions& run_options, const std::unordered_map<std::string, Tensor>& inputs,
             std::unordered_map<std::string, Tensor>& outputs);

  // With epctx.profile_file set: writes the profile (session creation, then every run node by
  // node, as a Chrome-trace JSON array in ONNX Runtime's profiler format) to that file and stops
  // profiling; returns the file's path. Returns "" when the session is not profiled or the
  // profile was already written. A profiled session not ended this way writes its profile when
  // destroyed (a failure is then only logged).
  Result<std::string> EndProfiling();

 private:
  explicit Session(std::unique_ptr<SessionImpl> impl);
  std::unique_ptr<SessionImpl> impl_;
};

}  // namespace epctx
