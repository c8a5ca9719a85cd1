// Builds a context blob: content-addressed weights, serialized programs and the manifest.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "format/blob_layout.h"
#include "util/aligned_buffer.h"
#include "util/hash.h"

namespace epctx::format {

struct WeightInput {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;
  uint32_t layout = 0;
  std::span<const std::byte> bytes;
  std::shared_ptr<const void> owner;  // keeps `bytes` alive until the blob is written
  // CPU features the bytes' layout needs beyond the writer's target (a kernel that computes
  // exactly on them only with VNNI, say): added to the blob's required features.
  uint64_t required_cpu_features = 0;
};

class BlobWriter {
 public:
  // `target`: the fingerprint written into the header (what the weights were packed for).
  BlobWriter();
  explicit BlobWriter(TargetFingerprint target);

  // Adds a weight, or finds an identical one already added (same layout, dtype, shape and bytes,
  // confirmed byte for byte). Returns its index in the manifest's weight table. Its
  // required_cpu_features join the target's either way.
  Result<uint32_t> AddWeight(WeightInput weight);

  // Adds a model: its programs (finished Program flatbuffers; [0] is the main graph).
  Status AddModel(std::string name, std::vector<std::vector<uint8_t>> programs,
                  uint64_t source_size, uint64_t source_hash);

  // Bytes of unique weight data (without alignment padding).
  uint64_t unique_weight_bytes() const { return unique_weight_bytes_; }
  size_t weight_count() const { return weights_.size(); }
  size_t dedup_hits() const { return dedup_hits_; }

  // Writes the blob atomically (temp file, fsync, rename). The header is written last, so an
  // interrupted write never yields a file that passes verification. `identity`, when given,
  // receives the blob's identity (its header checksum, see BlobHeader).
  Status WriteToFile(const std::string& path, uint64_t* identity = nullptr) const;
  Result<AlignedBuffer> WriteToMemory() const;

  // Where Emit puts bytes: the temporary file or a memory buffer.
  class Sink;

 private:
  TargetFingerprint target_;
  struct StoredWeight {
    WeightInput input;
    Hash128 hash;
    uint64_t offset = 0;  // within the WEIGHTS section
    uint64_t checksum = 0;
  };
  struct StoredModel {
    std::string name;
    std::vector<std::vector<uint8_t>> programs;
    uint64_t source_size = 0;
    uint64_t source_hash = 0;
  };
  struct Layout;

  Result<Layout> ComputeLayout() const;
  // Returns the header checksum.
  Result<uint64_t> Emit(const Layout& layout, Sink& sink) const;

  std::vector<StoredWeight> weights_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> by_hash_;
  std::vector<StoredModel> models_;
  uint64_t weights_section_size_ = 0;
  uint64_t unique_weight_bytes_ = 0;
  size_t dedup_hits_ = 0;
};

}  // namespace epctx::format
