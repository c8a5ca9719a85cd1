// Test fixtures for the blob format: blobs built from plain descriptions, and the editing tools the
// corruption tests use (header fields re-signed, manifests rebuilt with deliberately bad values).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "format/blob_layout.h"
#include "format/blob_reader.h"
#include "program_generated.h"

namespace epctx::format::blobtest {

using Bytes = std::vector<std::byte>;

// ---- Programs as plain data ---------------------------------------------------------------------

struct AttrSpec {
  std::string name{};
  fb::AttrType type = fb::AttrType::Undefined;
  int64_t i = 0;
  float f = 0;
  std::vector<uint8_t> s{};
  bool has_s = false;  // write `s` even when empty
  std::vector<int64_t> ints{};
  bool misalign_ints = false;  // place `ints` 4 bytes off 8-byte alignment
  std::vector<float> floats{};
  std::vector<std::string> strings{};
  int32_t tensor_dtype = 0;
  int32_t graph = -1;
};

struct ValueSpec {
  std::string name{};
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape{};
  bool has_shape = true;
  bool misalign_shape = false;           // place `shape` 4 bytes off 8-byte alignment
  std::vector<std::string> dim_names{};  // written only when not empty
  int32_t weight = -1;
  int64_t arena_offset = -1;
  int64_t arena_bytes = 0;
};

struct NodeSpec {
  std::string name{};
  std::string op_type{};
  std::string domain{};
  std::vector<int32_t> inputs{};
  std::vector<int32_t> outputs{};
  std::vector<AttrSpec> attributes{};
  int32_t implicit_inputs = 0;
};

struct ProgramSpec {
  std::string name{};
  std::vector<ValueSpec> values{};
  std::vector<NodeSpec> nodes{};
  std::vector<int32_t> inputs{};
  std::vector<int32_t> outputs{};
  int64_t arena_bytes = 0;
  std::vector<std::pair<std::string, int64_t>> opsets{};
};

// A finished Program flatbuffer, exactly as described (no validation: bad values stay bad). At most
// one misalign_* flag may be set per program (and per manifest).
std::vector<uint8_t> BuildProgram(const ProgramSpec& spec);

// ---- Blobs as plain data
// -------------------------------------------------------------------------

struct WeightSpec {
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape{};
  uint32_t layout = 0;
  Bytes bytes{};
};

struct ModelSpec {
  std::string name{};
  std::vector<ProgramSpec> programs{};
  uint64_t source_size = 0;
  uint64_t source_hash = 0;
};

struct BlobSpec {
  std::vector<WeightSpec> weights{};  // added in order; index i is weight i (no duplicates here)
  std::vector<ModelSpec> models{};
};

// Weights of every size class (several dtypes, a 0-d, an empty one, an odd-sized one) and two
// models: "vision" (main graph + an If body, every attribute type) and "head" (one program).
BlobSpec StandardSpec();

// The blob BlobWriter::WriteToMemory makes of `spec`, copied into an exactly sized vector (so that
// AddressSanitizer catches any read past its end).
Result<Bytes> BuildBlob(const BlobSpec& spec);

// BuildBlob(StandardSpec()), built once per process (empty, with a test failure, if it cannot be).
const Bytes& StandardBlob();

// OpenOptions for this machine (DetectedCpuFeatures()).
OpenOptions DefaultOptions();
Result<BlobView> OpenBlob(std::span<const std::byte> bytes,
                          const OpenOptions& options = DefaultOptions());

// Deterministic bytes of the given length.
Bytes PatternBytes(size_t size, uint8_t seed);

// ---- Editing blobs
// -------------------------------------------------------------------------------

BlobHeader ReadHeader(std::span<const std::byte> blob);
// Stores `header` and, when `resign`, recomputes header_checksum over the bytes before it.
void WriteHeader(Bytes& blob, BlobHeader header, bool resign = true);
// Index in the section table of the section of `kind` (-1 when absent).
int SectionIndex(const BlobHeader& header, SectionKind kind);
// The content of the section of `kind` as the header describes it.
std::span<const std::byte> SectionBytes(std::span<const std::byte> blob, SectionKind kind);
std::span<std::byte> SectionBytes(Bytes& blob, SectionKind kind);
// Recomputes every section checksum from its content, then the header checksum: after this, only
// meaning-level checks (FlatBuffers verification, index and range checks) can refuse the blob.
void ResignAll(Bytes& blob);

// The manifest as plain data, read from a blob whose manifest verifies.
struct WeightEntry {
  uint64_t offset = 0;
  uint64_t size = 0;
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  bool misalign_shape = false;  // place `shape` 4 bytes off 8-byte alignment
  uint32_t layout = 0;
  uint64_t hash_low = 0;
  uint64_t hash_high = 0;
  uint64_t checksum = 0;
};
struct ProgramRefEntry {
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t checksum = 0;
};
struct ModelEntry {
  std::string name;
  std::vector<ProgramRefEntry> programs;
  uint64_t source_size = 0;
  uint64_t source_hash = 0;
};
struct ManifestSpec {
  std::vector<ModelEntry> models;
  std::vector<WeightEntry> weights;
};

ManifestSpec ReadManifest(std::span<const std::byte> blob);
std::vector<uint8_t> BuildManifest(const ManifestSpec& spec);
// Puts `manifest` in place of the blob's MANIFEST section (which the writer puts last), fixes the
// file size and re-signs everything.
void ReplaceManifest(Bytes& blob, std::span<const uint8_t> manifest);
// Recomputes every ProgramRef checksum from the PROGRAMS section, then re-signs everything.
void RefreshProgramChecksums(Bytes& blob);

// Reads every field of every program and every weight byte of an opened blob, following every
// index (values, weights, body programs), so that AddressSanitizer sees any out-of-range access.
// Returns a digest of what it read, so the reads cannot be optimized away.
uint64_t TouchEverything(const BlobView& view);

// What a loader takes from a blob: model names, program bytes and weight bytes, in manifest order.
struct BlobContents {
  std::vector<std::string> models;
  std::vector<Bytes> programs;
  std::vector<Bytes> weights;
  bool operator==(const BlobContents&) const = default;
};
BlobContents ContentsOf(const BlobView& view);

// A fresh empty directory under the test temp dir, removed with everything in it at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  // Names of the entries in the directory, sorted.
  std::vector<std::string> List() const;

 private:
  std::string path_;
};

}  // namespace epctx::format::blobtest
