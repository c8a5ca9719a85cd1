// The context model (NAME_ctx.onnx): a valid ONNX model with the original's inputs and outputs
// whose body is one com.microsoft EPContext node pointing at the compiled program in a blob.
// Names follow ONNX Runtime's EPContext contrib op.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "compile/external_data_record.h"
#include "epctx/status.h"

namespace epctx::compile {

inline constexpr const char* kEpContextOp = "EPContext";
inline constexpr const char* kEpContextDomain = "com.microsoft";
inline constexpr const char* kEpContextSource = "epctx";
// Metadata keys recording the original model, for the fallback and the staleness check.
inline constexpr const char* kMetaOriginalPath = "epctx.original_model";
inline constexpr const char* kMetaOriginalSize = "epctx.original_size";
inline constexpr const char* kMetaOriginalMtime = "epctx.original_mtime_ns";
inline constexpr const char* kMetaOriginalHash = "epctx.original_hash";
// The original's external data files, one line each: "SIZE MTIME_NS HASH LOCATION" (hash in hex,
// the location with '%' and newlines escaped as %25 and %0A).
inline constexpr const char* kMetaOriginalExternalData = "epctx.original_external_data";
// The blob's identity (its header checksum, hex): the context model pairs with that blob only.
inline constexpr const char* kMetaBlobChecksum = "epctx.blob_checksum";
// Embedded blobs above this size are refused: protobuf messages cannot exceed 2 GiB, and the
// context model must stay comfortably parseable.
inline constexpr uint64_t kMaxEmbeddedBlobBytes = 1ull << 30;

struct ContextModelSpec {
  std::string graph_name;
  std::string node_name;
  std::string partition_name;  // the model's name inside the blob
  bool main_context = true;
  bool embed = false;
  std::string blob_reference;                // embed=false: blob path relative to the context model
  std::span<const std::byte> embedded_blob;  // embed=true
  std::string hardware_architecture;
  std::string notes;
  int64_t ir_version = 8;
  std::map<std::string, int64_t> opsets;       // of the original model
  std::vector<std::string> input_value_infos;  // serialized onnx::ValueInfoProto
  std::vector<std::string> output_value_infos;
  std::string original_path;  // relative to the context model's directory
  uint64_t original_size = 0;
  int64_t original_mtime_ns = 0;
  uint64_t original_hash = 0;
  std::vector<ExternalDataRecord> original_external_data;
  uint64_t blob_identity = 0;  // the blob's header checksum
  // Repeated from the original (its metadata_props before epctx's own keys; a key of the
  // original's that starts with "epctx." is left out).
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::string graph_doc_string;
  std::vector<std::pair<std::string, std::string>> original_metadata_props;
};

// "resnet50" -> "resnet50_ctx.onnx": the file name of a context model (see
// DefaultContextModelPathFor in include/epctx/compiler.h).
std::string ContextModelFileName(const std::string& stem);

// Serialized ModelProto bytes.
Result<std::string> SerializeContextModel(const ContextModelSpec& spec);

// A graph input or output as the context model declares it.
struct IoDeclaration {
  std::string name;
  int32_t elem_type = 0;  // ONNX TensorProto data type; 0 when not declared
  bool has_shape = false;
  std::vector<int64_t> dims;  // -1 for a dim without a value
};

// What the loader needs from a context model.
struct ContextModelInfo {
  std::string node_name;
  std::string partition_name;
  bool main_context = true;
  bool embed = false;
  std::string blob_reference;  // embed=false
  std::string embedded_blob;   // embed=true: the blob bytes
  std::string source;
  std::string original_path;  // as recorded (relative to the context model); may be empty
  std::optional<uint64_t> original_size;
  std::optional<int64_t> original_mtime_ns;
  std::optional<uint64_t> original_hash;
  // Relative to the original model's folder; a malformed record makes the list unreadable:
  // original_external_data_malformed is then set.
  std::vector<ExternalDataRecord> original_external_data;
  bool original_external_data_malformed = false;
  std::optional<uint64_t> blob_identity;  // nullopt when not recorded
  std::vector<IoDeclaration> inputs;      // the graph's, in order
  std::vector<IoDeclaration> outputs;
};

// nullopt when the model has no EPContext node (an original model); an error when it has one
// that is malformed (another domain than com.microsoft, an attribute of the wrong type, no
// ep_cache_context or partition_name), or several (not supported yet).
Result<std::optional<ContextModelInfo>> ParseContextModel(std::span<const std::byte> bytes,
                                                          const std::string& name);

}  // namespace epctx::compile
