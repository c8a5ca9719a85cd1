// Looking inside context models and blobs without creating a session (`epctx inspect`), and
// checking them completely, weight checksums included (`epctx verify`).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "epctx/status.h"

namespace epctx {

struct BlobSectionInfo {
  std::string name;  // "WEIGHTS", "PROGRAMS", "MANIFEST"
  uint64_t offset = 0;
  uint64_t size = 0;
};

struct ProgramInfo {
  std::string name;  // the graph's name
  size_t node_count = 0;
  size_t value_count = 0;
  size_t input_count = 0;
  size_t output_count = 0;
  uint64_t arena_bytes = 0;
  size_t weight_values = 0;                 // values that are weights
  std::map<std::string, size_t> op_counts;  // "Conv", "com.epctx.FusedConv", ...
};

struct BlobModelInfo {
  std::string name;                   // the partition name
  std::vector<ProgramInfo> programs;  // [0] the main graph, then control-flow bodies
  uint64_t source_size = 0;
  uint64_t source_hash = 0;
};

struct BlobInfo {
  std::string name;  // the blob's path, or where it is embedded
  uint64_t file_size = 0;
  uint32_t format_version = 0;
  std::string engine_version;
  std::string hardware_architecture;  // "x86_64:avx2,fma,..." (CPU features it was packed for)
  std::string packing_build_id;
  uint32_t pack_layout_version = 0;
  // Empty when this build can use the blob on this CPU; otherwise why not.
  std::string target_mismatch;
  std::vector<BlobSectionInfo> sections;
  size_t weight_count = 0;
  uint64_t weight_bytes = 0;
  std::map<uint32_t, size_t> weights_per_layout;  // packing layout id -> weights
  std::vector<BlobModelInfo> models;
};

// The EPContext node of a context model and what it points at.
struct EpContextInfo {
  std::string context_model_path;
  std::string node_name;
  std::string partition_name;
  bool embedded = false;
  std::string blob_path;            // resolved; empty when embedded
  std::string original_model_path;  // resolved; empty when not recorded
  std::optional<uint64_t> original_size;
  std::optional<int64_t> original_mtime_ns;
  std::optional<uint64_t> original_hash;
  // Empty when the blob is the one compiled with this context model and holds its partition;
  // otherwise why a load of the context model cannot use it (it then falls back or fails).
  std::string blob_mismatch;
};

struct InspectReport {
  std::optional<EpContextInfo> context;  // set when the file was a context model
  BlobInfo blob;
};

// `path` is a context model (NAME_ctx.onnx) or a blob file. The blob is fully verified except
// for its target (a blob for another CPU or build can be inspected; `target_mismatch` says why it
// would not load here) and its weight checksums (see VerifyModel).
struct InspectOptions {
  // As epctx.allow_external_paths: the context model may name files outside its folder.
  bool allow_external_paths = false;
};
Result<InspectReport> InspectModel(const std::string& path, const InspectOptions& options = {});

struct VerifyCheck {
  std::string what;  // "blob structure", "target", "weight checksums", ...
  bool passed = false;
  std::string detail;  // what was checked, or why it failed
};

struct VerifyOptions {
  // Also hash the original model and compare with the hash recorded at compile time (reads the
  // whole original). Without it, the original is checked by size and mtime, as at load.
  bool hash_original = false;
  // As epctx.allow_external_paths: the context model may name files outside its folder.
  bool allow_external_paths = false;
};

// Every check a load makes, plus those a load skips to stay O(nodes): the checksum of every
// weight, binding every program of every model to this build's kernels, and (for a context
// model) the state of the original model. Checks after a failed structural check are skipped.
// An error Result only when `path` cannot be read or is neither a context model nor a blob.
Result<std::vector<VerifyCheck>> VerifyModel(const std::string& path,
                                             const VerifyOptions& options = {});

}  // namespace epctx
