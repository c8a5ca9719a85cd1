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

// Two ways to write a blob:
// - in memory (the default constructor): AddWeight keeps each weight (its bytes and owner) until
//   WriteToFile or WriteToMemory lays the blob out;
// - streaming (ToFile): each new weight's bytes go into the blob's temporary file as AddWeight is
//   given them, and nothing of them stays in memory, so a compile holds one weight at a time.
//   Finish writes the programs, the manifest and, last, the header, then renames the file over
//   `path`. A writer dropped before Finish removes its temporary file; until the header lands the
//   temporary file's header page is zeros, so an interrupted write never yields a loadable file.
// Both confirm a duplicate byte for byte before storing it once (streaming: against the bytes
// read back from the file) and produce the same file for the same calls.
class BlobWriter {
 public:
  // `target`: the fingerprint written into the header (what the weights were packed for).
  BlobWriter();
  explicit BlobWriter(TargetFingerprint target);
  static Result<BlobWriter> ToFile(TargetFingerprint target, const std::string& path);
  ~BlobWriter();
  BlobWriter(BlobWriter&&) noexcept;
  BlobWriter& operator=(BlobWriter&&) noexcept;

  // Adds a weight, or finds an identical one already added (same layout, dtype, shape and bytes,
  // confirmed byte for byte). Returns its index in the manifest's weight table. Its
  // required_cpu_features join the target's either way. Streaming, the bytes are written before it
  // returns and may be freed then.
  Result<uint32_t> AddWeight(WeightInput weight);

  // Adds a model: its programs (finished Program flatbuffers; [0] is the main graph).
  Status AddModel(std::string name, std::vector<std::vector<uint8_t>> programs,
                  uint64_t source_size, uint64_t source_hash);

  // Bytes of unique weight data (without alignment padding).
  uint64_t unique_weight_bytes() const { return unique_weight_bytes_; }
  size_t weight_count() const { return weights_.size(); }
  size_t dedup_hits() const { return dedup_hits_; }
  bool streaming() const { return stream_ != nullptr; }
  // Streaming: bytes handed to the file so far.
  uint64_t bytes_written() const;
  // Streaming: where the weights go until Finish (for tests and messages).
  std::string temp_path() const;

  // In memory: writes the blob atomically (temp file, fsync, rename). The header is written last,
  // so an interrupted write never yields a file that passes verification. `identity`, when given,
  // receives the blob's identity (its header checksum, see BlobHeader).
  Status WriteToFile(const std::string& path, uint64_t* identity = nullptr) const;
  Result<AlignedBuffer> WriteToMemory() const;
  // Streaming: completes and publishes the file ToFile named; the writer is spent afterwards.
  Status Finish(uint64_t* identity = nullptr);

  // Where Emit puts bytes: the temporary file or a memory buffer.
  class Sink;
  class Stream;

 private:
  TargetFingerprint target_;
  struct StoredWeight {
    WeightInput input;  // streaming: without bytes or owner
    uint64_t size = 0;
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

  Result<bool> SameBytes(const StoredWeight& stored, std::span<const std::byte> bytes) const;
  Result<Layout> ComputeLayout() const;
  // Writes the weights (unless streamed already), programs, manifest and header; returns the
  // header checksum.
  Result<uint64_t> Emit(const Layout& layout, Sink& sink, bool weights_written) const;

  std::vector<StoredWeight> weights_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> by_hash_;
  std::vector<StoredModel> models_;
  uint64_t weights_section_size_ = 0;
  uint64_t unique_weight_bytes_ = 0;
  size_t dedup_hits_ = 0;
  // The WEIGHTS section's checksum, hashed as weights are added (in offset order).
  std::unique_ptr<Hasher64> weights_hash_;
  std::unique_ptr<Stream> stream_;  // streaming only
};

}  // namespace epctx::format
