// Compiles original ONNX models into context models (NAME_ctx.onnx) and context blobs.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "epctx/options.h"
#include "epctx/status.h"

namespace epctx {

struct CompileReport {
  std::string context_model_path;
  std::string blob_path;  // empty with embed mode
  uint64_t blob_size = 0;
  uint64_t weight_bytes = 0;  // unique weight bytes stored in the blob
  size_t weight_count = 0;
  size_t node_count = 0;      // nodes in the main program after optimization
  bool blob_pending = false;  // ep.share_ep_contexts: the shared blob is written by the last call
  std::vector<std::string> warnings;
};

// The outcome for one model of a multi-model compile.
struct ModelCompileResult {
  std::string model_path;
  std::string context_model_path;
  std::string partition_name;
  bool compiled = false;
  std::string error;  // why it failed, when it did
  StatusCode error_code = StatusCode::kOk;
  std::vector<std::string> warnings;
  size_t node_count = 0;
  uint64_t weight_bytes = 0;  // this model's weights before deduplication
};

struct MultiCompileReport {
  std::vector<ModelCompileResult> models;
  bool written = false;  // all context models and the blob were written (all or nothing)
  std::string blob_path;
  uint64_t blob_size = 0;
  uint64_t weight_bytes = 0;  // unique weight bytes in the shared blob
  size_t weight_count = 0;
  size_t dedup_hits = 0;  // weights found already stored (same layout and bytes)
};

// Where a compile is, for a progress display (ModelCompiler::SetProgressReporter). A compile
// reports each stage as it starts and each weight as it is written into the blob.
struct CompileProgress {
  std::string model;       // the model being compiled (its path, or "<model in memory>")
  size_t model_index = 0;  // of model_count, from 0
  size_t model_count = 1;
  std::string stage;           // "importing", "optimizing", "writing weights", "finishing"
  size_t weights_done = 0;     // this model's weights handed to the blob (packed first if packed)
  size_t weights_total = 0;    // this model's weights ("writing weights" and after)
  uint64_t bytes_written = 0;  // blob bytes written to its file so far (all models)
};

class ModelCompiler {
 public:
  explicit ModelCompiler(SessionOptions options = {});

  // Progress messages ("[2/3] compiling b.onnx") for long compiles.
  void SetProgressCallback(std::function<void(const std::string&)> callback);
  // Progress as it happens, on the compiling thread: at each stage and after each weight (the
  // callback decides how often to show it).
  void SetProgressReporter(std::function<void(const CompileProgress&)> reporter);

  // Writes `context_model_path` and, beside it, "<stem>.epctx" holding the compiled blob (unless
  // ep.context_embed_mode=1). Both are written atomically; a failure leaves neither behind.
  //
  // With ep.share_ep_contexts=1 the model joins this process's open shared group instead: its
  // context model is written now and refers to the group's blob, which is written when a call
  // also sets ep.stop_share_ep_contexts=1 (ONNX Runtime's meaning). The blob then equals what
  // CompileModels() writes for the same models in the same order.
  Result<CompileReport> CompileToFile(const std::string& model_path,
                                      const std::string& context_model_path) const;
  // The same for an original model given as bytes (ONNX Runtime's "input model from buffer").
  // Such a context model records no original model, so a blob that cannot serve is an error
  // rather than a fallback; external data is refused (there is no folder to resolve it against).
  Result<CompileReport> CompileToFile(std::span<const std::byte> model_bytes,
                                      const std::string& context_model_path) const;

  // Returns the context model's bytes instead of writing them. `ep.context_file_path` says where
  // the caller will save them: the blob is written beside that path (DefaultBlobPathFor, or the
  // shared blob with ep.share_ep_contexts) and referenced relative to it. Without that option
  // only ep.context_embed_mode=1 works (the blob travels inside the returned bytes).
  Result<std::string> CompileToBytes(const std::string& model_path,
                                     CompileReport* report = nullptr) const;
  Result<std::string> CompileToBytes(std::span<const std::byte> model_bytes,
                                     CompileReport* report = nullptr) const;

  // Compiles several models into `output_dir`: one context model each (NAME_ctx.onnx; a repeated
  // NAME gets _1, _2, ... with a warning) and one shared blob in which identical weights are
  // stored once. Per-model failures are reported in the result; then nothing is written. An error
  // Result means the request itself was unusable (no models, output dir not creatable).
  Result<MultiCompileReport> CompileModels(const std::vector<std::string>& model_paths,
                                           const std::string& output_dir) const;

 private:
  SessionOptions options_;
  std::function<void(const std::string&)> progress_;
  std::function<void(const CompileProgress&)> reporter_;
};

// What this build can compile for: one instruction-set target per build (docs/DEPARTURES.md).
struct CompileTarget {
  std::string hardware_architecture;  // "x86_64:avx2,fma,avx512f,..." (EPContext attribute)
  std::string packing_build_id;       // hash of the kernel and packing sources
  uint32_t pack_layout_version = 0;
  bool usable_on_this_cpu = false;  // every required CPU feature is present
  std::string kernel_isa;           // the tier the weights are packed for: "avx2", "avx512_core"
  std::string kernel_library;       // "oneDNN 2.6.3 (Debian package 2.6.3-1)"
  // oneDNN's int8 kernels have VNNI here, so every int8 weight goes to them; without it only
  // weights within [-64, 64] do (the others would saturate), the rest stay on exact kernels.
  bool int8_vnni = false;
};
CompileTarget CurrentCompileTarget();
// "id name: meaning" lines of the weight packing layouts.
std::vector<std::string> PackLayoutDescriptions();
// "domain op_type from opset N; input 0: float32" lines of every operator a model may hold (the
// ONNX domain shown as ai.onnx; after the opset, the value whose element type the kernel computes
// on and the types it takes): those this build's kernels run, and Constant, sorted; epctx's own
// com.epctx operators last.
std::vector<std::string> SupportedOperatorLines();
// "key (default "v"): meaning" lines of every SessionOptions key, for --help texts.
std::string DescribeConfigKeys();

// The context model of an original model: "models/resnet50.onnx" -> "models/resnet50_ctx.onnx",
// or in `output_dir` when one is given ("out/resnet50_ctx.onnx"). The one home of that rule.
std::string DefaultContextModelPathFor(const std::string& model_path,
                                       const std::string& output_dir = "");
// "out/resnet50_ctx.onnx" -> "out/resnet50_ctx.epctx": the blob file the compiler writes.
std::string DefaultBlobPathFor(const std::string& context_model_path);
// The shared blob of a multi-model compile whose first context model is `first_context_model`:
// "out/trunk_cls_ctx.onnx" -> "out/trunk_cls_shared.epctx".
std::string SharedBlobPathFor(const std::string& first_context_model);

}  // namespace epctx
