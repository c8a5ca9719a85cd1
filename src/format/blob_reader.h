// Verifies a context blob held in memory (mapped or read) and gives typed access to it.
// Every range is checked against the real size before a pointer is formed.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "epctx/status.h"
#include "format/blob_layout.h"

namespace epctx::fb {
struct Manifest;
struct Model;
struct Program;
struct Weight;
}  // namespace epctx::fb

namespace epctx::format {

struct OpenOptions {
  // CPU features the blob may require (normally DetectedCpuFeatures()).
  uint64_t available_cpu_features = 0;
  // Also check every weight's checksum: reads all weight bytes, so O(size of the blob).
  bool verify_weight_checksums = false;
  // Refuse a blob packed for another build or for CPU features not available. Only tools that
  // look at foreign blobs without running them (`epctx inspect`) turn this off.
  bool check_target = true;
};

class BlobView {
 public:
  // Checks, in order: header (magic, version, size, checksum), target fingerprint, section table
  // against the real size, manifest and program checksums, FlatBuffers verification, and the
  // meaning of every index and range. `name` is used in error messages (normally the path).
  static Result<BlobView> Open(std::span<const std::byte> bytes, std::string name,
                               const OpenOptions& options);

  const BlobHeader& header() const { return *header_; }
  const fb::Manifest& manifest() const { return *manifest_; }
  std::span<const std::byte> bytes() const { return bytes_; }
  const std::string& name() const { return name_; }

  // The model whose name is `model_name`, or kNotFound listing the models present.
  Result<const fb::Model*> FindModel(std::string_view model_name) const;
  // Program `index` of `model` (verified at open).
  const fb::Program* GetProgram(const fb::Model& model, uint32_t index) const;
  // Bytes of weight `index` (range verified at open).
  std::span<const std::byte> WeightBytes(uint32_t index) const;

 private:
  std::span<const std::byte> bytes_;
  std::string name_;
  const BlobHeader* header_ = nullptr;
  const fb::Manifest* manifest_ = nullptr;
  std::span<const std::byte> weights_;
  std::span<const std::byte> programs_;
};

}  // namespace epctx::format
