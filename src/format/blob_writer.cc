#include "format/blob_writer.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "epctx_build_info.h"
#include "format/target.h"
#include "program_generated.h"
#include "util/file.h"
#include "util/overflow.h"
#include "util/status_macros.h"

namespace epctx::format {
namespace {

uint64_t AlignUp(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

Hash128 ContentHash(const WeightInput& w) {
  Hasher128 h;
  h.UpdateValue(w.layout);
  h.UpdateValue(static_cast<int32_t>(w.dtype));
  uint64_t rank = w.shape.size();
  h.UpdateValue(rank);
  for (int64_t d : w.shape) h.UpdateValue(d);
  h.Update(w.bytes);
  return h.Finish();
}

}  // namespace

struct BlobWriter::Layout {
  uint64_t weights_offset = 0;
  uint64_t programs_offset = 0;
  uint64_t programs_size = 0;
  std::vector<std::vector<uint64_t>> program_offsets;  // per model, per program (in section)
  uint64_t manifest_offset = 0;
  flatbuffers::DetachedBuffer manifest;
  uint64_t file_size = 0;
};

class BlobWriter::Sink {
 public:
  virtual ~Sink() = default;
  virtual Status WriteAt(uint64_t offset, std::span<const std::byte> bytes) = 0;
};

namespace {

// Hands the file whole 2 MiB-aligned chunks: Emit writes in rising offset order (all but the
// header, last, at 0), so the sink fills one chunk at a time and writes it when the next begins.
// Linux (6.x with large folios, e.g. ext4) then caches the blob in 2 MiB folios, which a loader's
// 2 MiB-aligned mapping (MappedFile) maps with one page-table entry each: a first run faults the
// weights in a few hundred entries instead of a fault per 64 KiB. The bytes are the same as
// writing each piece where it lies; padding between pieces is zeros either way.
class ChunkedFileSink final : public BlobWriter::Sink {
 public:
  static constexpr uint64_t kChunkSize = uint64_t{2} << 20;

  explicit ChunkedFileSink(AtomicFileWriter& writer) : writer_(writer), chunk_(kChunkSize) {}

  Status WriteAt(uint64_t offset, std::span<const std::byte> bytes) override {
    while (!bytes.empty()) {
      if (offset < chunk_begin_) {
        // Before the chunk being filled (the header): those chunks are written already.
        uint64_t n = std::min<uint64_t>(bytes.size(), chunk_begin_ - offset);
        EPCTX_RETURN_IF_ERROR(writer_.WriteAt(offset, bytes.first(n)));
        offset += n;
        bytes = bytes.subspan(n);
        continue;
      }
      if (offset >= chunk_begin_ + kChunkSize) {
        EPCTX_RETURN_IF_ERROR(Flush());
        chunk_begin_ = offset / kChunkSize * kChunkSize;
        continue;
      }
      uint64_t at = offset - chunk_begin_;
      uint64_t n = std::min<uint64_t>(bytes.size(), kChunkSize - at);
      std::memcpy(chunk_.data() + at, bytes.data(), n);
      chunk_used_ = std::max(chunk_used_, at + n);
      offset += n;
      bytes = bytes.subspan(n);
    }
    return Status::Ok();
  }

  // Writes the chunk being filled (up to its last written byte) and starts an empty one. The
  // disk write starts at once, so that the final fsync waits for little.
  Status Flush() {
    if (chunk_used_ > 0) {
      EPCTX_RETURN_IF_ERROR(writer_.WriteAt(chunk_begin_, std::span(chunk_.data(), chunk_used_)));
      writer_.StartWriteback(chunk_begin_, chunk_used_);
      std::memset(chunk_.data(), 0, chunk_used_);
      chunk_used_ = 0;
    }
    return Status::Ok();
  }

  // Bytes written earlier at `offset`: from the file, or from the chunk not yet handed to it.
  Status ReadBack(uint64_t offset, std::span<std::byte> out) const {
    while (!out.empty()) {
      if (offset < chunk_begin_) {
        uint64_t n = std::min<uint64_t>(out.size(), chunk_begin_ - offset);
        EPCTX_RETURN_IF_ERROR(writer_.ReadAt(offset, out.first(n)));
        offset += n;
        out = out.subspan(n);
        continue;
      }
      uint64_t at = offset - chunk_begin_;
      if (at >= chunk_used_ || out.size() > chunk_used_ - at) {
        return EPCTX_ERROR(kInternal, "blob read-back at {} of {} bytes is past what was written",
                           offset, out.size());
      }
      std::memcpy(out.data(), chunk_.data() + at, out.size());
      return Status::Ok();
    }
    return Status::Ok();
  }

 private:
  AtomicFileWriter& writer_;
  std::vector<std::byte> chunk_;
  uint64_t chunk_begin_ = 0;
  uint64_t chunk_used_ = 0;
};

class MemorySink final : public BlobWriter::Sink {
 public:
  explicit MemorySink(AlignedBuffer& buffer) : buffer_(buffer) {}
  Status WriteAt(uint64_t offset, std::span<const std::byte> bytes) override {
    if (!RangeInside(offset, bytes.size(), buffer_.size())) {
      return EPCTX_ERROR(kInternal, "blob layout write at {} of {} bytes exceeds {}", offset,
                         bytes.size(), buffer_.size());
    }
    if (!bytes.empty()) std::memcpy(buffer_.data() + offset, bytes.data(), bytes.size());
    return Status::Ok();
  }

 private:
  AlignedBuffer& buffer_;
};

}  // namespace

// The temporary file of a streaming writer and its chunked sink.
class BlobWriter::Stream {
 public:
  explicit Stream(AtomicFileWriter file) : file_(std::move(file)), sink_(file_) {}

  Status Write(uint64_t offset, std::span<const std::byte> bytes) {
    EPCTX_RETURN_IF_ERROR(sink_.WriteAt(offset, bytes));
    end_ = std::max(end_, offset + bytes.size());
    return Status::Ok();
  }

  // Whether the file holds `bytes` at `offset`, read back a piece at a time.
  Result<bool> Matches(uint64_t offset, std::span<const std::byte> bytes) {
    constexpr size_t kPiece = size_t{1} << 20;
    if (piece_.empty()) piece_.resize(kPiece);
    for (size_t at = 0; at < bytes.size(); at += kPiece) {
      const size_t n = std::min(kPiece, bytes.size() - at);
      std::span<std::byte> stored(piece_.data(), n);
      EPCTX_RETURN_IF_ERROR(sink_.ReadBack(offset + at, stored));
      if (std::memcmp(stored.data(), bytes.data() + at, n) != 0) return false;
    }
    return true;
  }

  Status Commit() {
    EPCTX_RETURN_IF_ERROR(sink_.Flush());
    return file_.Commit();
  }

  ChunkedFileSink& sink() { return sink_; }
  uint64_t bytes_written() const { return end_; }
  const std::string& temp_path() const { return file_.temp_path(); }

 private:
  AtomicFileWriter file_;
  ChunkedFileSink sink_;
  uint64_t end_ = 0;
  std::vector<std::byte> piece_;
};

BlobWriter::BlobWriter() : BlobWriter(CurrentTarget()) {}

BlobWriter::BlobWriter(TargetFingerprint target)
    : target_(target), weights_hash_(std::make_unique<Hasher64>()) {}

BlobWriter::~BlobWriter() = default;
BlobWriter::BlobWriter(BlobWriter&&) noexcept = default;
BlobWriter& BlobWriter::operator=(BlobWriter&&) noexcept = default;

Result<uint32_t> BlobWriter::AddWeight(WeightInput weight) {
  size_t elem = DataTypeSize(weight.dtype);
  if (elem == 0) {
    return EPCTX_ERROR(kUnsupported, "weight of type {} cannot be stored",
                       DataTypeName(weight.dtype));
  }
  if (weight.shape.size() > kMaxRank) {
    return EPCTX_ERROR(kUnsupported, "weight rank {} exceeds the limit {}", weight.shape.size(),
                       kMaxRank);
  }
  EPCTX_ASSIGN_OR_RETURN(int64_t count, CheckedElementCount(weight.shape));
  uint64_t expected = 0;
  if (!CheckedMul(static_cast<uint64_t>(count), elem, &expected) ||
      expected != weight.bytes.size()) {
    return EPCTX_ERROR(kInternal, "weight of shape {} {} has {} bytes, expected {}",
                       ShapeToString(weight.shape), DataTypeName(weight.dtype), weight.bytes.size(),
                       expected);
  }
  if (weights_.size() >= kMaxWeights) {
    return EPCTX_ERROR(kUnsupported, "more than {} weights", kMaxWeights);
  }
  if (weights_hash_ == nullptr) return EPCTX_ERROR(kInternal, "blob writer used after Finish");

  target_.required_cpu_features |= weight.required_cpu_features;
  Hash128 hash = ContentHash(weight);
  auto& candidates = by_hash_[hash.low];
  for (uint32_t index : candidates) {
    const StoredWeight& s = weights_[index];
    if (s.hash == hash && s.input.layout == weight.layout && s.input.dtype == weight.dtype &&
        s.input.shape == weight.shape && s.size == weight.bytes.size()) {
      EPCTX_ASSIGN_OR_RETURN(bool same, SameBytes(s, weight.bytes));
      if (same) {
        ++dedup_hits_;
        return index;
      }
    }
  }
  StoredWeight stored;
  stored.hash = hash;
  stored.size = weight.bytes.size();
  stored.offset = AlignUp(weights_section_size_, kTensorAlignment);
  stored.checksum = Hash64(weight.bytes);
  if (stream_ != nullptr) {
    EPCTX_RETURN_IF_ERROR(stream_->Write(kHeaderPageSize + stored.offset, weight.bytes));
  }
  static const std::byte kZeros[kTensorAlignment] = {};
  if (stored.offset > weights_section_size_) {
    weights_hash_->Update(std::span(kZeros, stored.offset - weights_section_size_));
  }
  weights_hash_->Update(weight.bytes);
  if (stream_ != nullptr) {
    // The file holds the bytes now: nothing of them is kept.
    weight.bytes = {};
    weight.owner.reset();
  }
  weights_section_size_ = stored.offset + stored.size;
  unique_weight_bytes_ += stored.size;
  stored.input = std::move(weight);
  uint32_t index = static_cast<uint32_t>(weights_.size());
  weights_.push_back(std::move(stored));
  candidates.push_back(index);
  return index;
}

Result<bool> BlobWriter::SameBytes(const StoredWeight& stored,
                                   std::span<const std::byte> bytes) const {
  // Empty weights may have null data, which memcmp must not be given even for 0 bytes.
  if (bytes.empty()) return true;
  if (stream_ == nullptr) {
    return std::memcmp(stored.input.bytes.data(), bytes.data(), bytes.size()) == 0;
  }
  return stream_->Matches(kHeaderPageSize + stored.offset, bytes);
}

uint64_t BlobWriter::bytes_written() const {
  return stream_ == nullptr ? 0 : stream_->bytes_written();
}

std::string BlobWriter::temp_path() const {
  return stream_ == nullptr ? std::string() : stream_->temp_path();
}

Status BlobWriter::AddModel(std::string name, std::vector<std::vector<uint8_t>> programs,
                            uint64_t source_size, uint64_t source_hash) {
  if (name.empty() || name.size() > kMaxNameLength) {
    return EPCTX_ERROR(kInvalidArgument, "model name must have 1 to {} characters", kMaxNameLength);
  }
  for (const StoredModel& m : models_) {
    if (m.name == name) return EPCTX_ERROR(kInvalidArgument, "model '{}' added twice", name);
  }
  if (programs.empty()) return EPCTX_ERROR(kInvalidArgument, "model '{}' has no program", name);
  // The reader's limits, so that the writer never produces a blob the reader refuses.
  if (models_.size() >= kMaxModels) {
    return EPCTX_ERROR(kUnsupported, "model '{}': a blob holds at most {} models", name,
                       kMaxModels);
  }
  if (programs.size() > kMaxPrograms) {
    return EPCTX_ERROR(kUnsupported, "model '{}' has {} programs, above the limit {}", name,
                       programs.size(), kMaxPrograms);
  }
  for (size_t i = 0; i < programs.size(); ++i) {
    if (programs[i].size() > kMaxProgramBytes) {
      return EPCTX_ERROR(kUnsupported, "model '{}' program {} has {} bytes, above the limit {}",
                         name, i, programs[i].size(), kMaxProgramBytes);
    }
  }
  models_.push_back({std::move(name), std::move(programs), source_size, source_hash});
  return Status::Ok();
}

Result<BlobWriter::Layout> BlobWriter::ComputeLayout() const {
  if (models_.empty()) return EPCTX_ERROR(kInvalidArgument, "blob has no model");
  Layout layout;
  layout.weights_offset = kHeaderPageSize;
  layout.programs_offset =
      AlignUp(layout.weights_offset + weights_section_size_, kSectionAlignment);
  uint64_t cursor = 0;
  for (const StoredModel& m : models_) {
    std::vector<uint64_t> offsets;
    for (const auto& p : m.programs) {
      cursor = AlignUp(cursor, kProgramAlignment);
      offsets.push_back(cursor);
      cursor += p.size();
    }
    layout.program_offsets.push_back(std::move(offsets));
  }
  layout.programs_size = cursor;

  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::Weight>> weights;
  weights.reserve(weights_.size());
  for (const StoredWeight& w : weights_) {
    weights.push_back(fb::CreateWeight(fbb, w.offset, w.size, static_cast<int32_t>(w.input.dtype),
                                       fbb.CreateVector(w.input.shape), w.input.layout, w.hash.low,
                                       w.hash.high, w.checksum));
  }
  std::vector<flatbuffers::Offset<fb::Model>> models;
  for (size_t mi = 0; mi < models_.size(); ++mi) {
    const StoredModel& m = models_[mi];
    std::vector<flatbuffers::Offset<fb::ProgramRef>> refs;
    for (size_t pi = 0; pi < m.programs.size(); ++pi) {
      const auto& p = m.programs[pi];
      refs.push_back(fb::CreateProgramRef(
          fbb, layout.program_offsets[mi][pi], p.size(),
          Hash64(std::as_bytes(std::span<const uint8_t>(p.data(), p.size())))));
    }
    models.push_back(fb::CreateModel(fbb, fbb.CreateString(m.name), fbb.CreateVector(refs),
                                     m.source_size, m.source_hash));
  }
  fbb.Finish(fb::CreateManifest(fbb, fbb.CreateVector(models), fbb.CreateVector(weights)));
  layout.manifest = fbb.Release();
  if (layout.manifest.size() > kMaxManifestBytes) {
    return EPCTX_ERROR(kUnsupported, "the manifest has {} bytes, above the limit {}",
                       layout.manifest.size(), kMaxManifestBytes);
  }
  layout.manifest_offset =
      AlignUp(layout.programs_offset + layout.programs_size, kSectionAlignment);
  layout.file_size = layout.manifest_offset + layout.manifest.size();
  return layout;
}

Result<uint64_t> BlobWriter::Emit(const Layout& layout, Sink& sink, bool weights_written) const {
  if (!weights_written) {
    // An all-zero header page first: until the real header lands last, the file cannot verify.
    std::vector<std::byte> zero_page(kHeaderPageSize);
    EPCTX_RETURN_IF_ERROR(sink.WriteAt(0, zero_page));
    for (const StoredWeight& w : weights_) {
      EPCTX_RETURN_IF_ERROR(sink.WriteAt(layout.weights_offset + w.offset, w.input.bytes));
    }
  }

  Hasher64 programs_hash;
  uint64_t at = 0;
  std::vector<std::byte> padding(kProgramAlignment);
  for (size_t mi = 0; mi < models_.size(); ++mi) {
    for (size_t pi = 0; pi < models_[mi].programs.size(); ++pi) {
      uint64_t off = layout.program_offsets[mi][pi];
      if (off > at) programs_hash.Update(std::span(padding.data(), off - at));
      auto bytes = std::as_bytes(std::span<const uint8_t>(models_[mi].programs[pi]));
      EPCTX_RETURN_IF_ERROR(sink.WriteAt(layout.programs_offset + off, bytes));
      programs_hash.Update(bytes);
      at = off + bytes.size();
    }
  }
  auto manifest =
      std::as_bytes(std::span<const uint8_t>(layout.manifest.data(), layout.manifest.size()));
  EPCTX_RETURN_IF_ERROR(sink.WriteAt(layout.manifest_offset, manifest));

  BlobHeader header{};
  std::memcpy(header.magic, kBlobMagic, sizeof header.magic);
  header.format_version = kFormatVersion;
  header.header_size = sizeof(BlobHeader);
  std::strncpy(header.engine_version, EPCTX_ENGINE_VERSION, sizeof header.engine_version - 1);
  header.target = target_;
  header.file_size = layout.file_size;
  header.section_count = 3;
  header.sections[0] = {static_cast<uint32_t>(SectionKind::kWeights), 0, layout.weights_offset,
                        weights_section_size_, weights_hash_->Finish()};
  header.sections[1] = {static_cast<uint32_t>(SectionKind::kPrograms), 0, layout.programs_offset,
                        layout.programs_size, programs_hash.Finish()};
  header.sections[2] = {static_cast<uint32_t>(SectionKind::kManifest), 0, layout.manifest_offset,
                        manifest.size(), Hash64(manifest)};
  header.header_checksum =
      Hash64(std::as_bytes(std::span(&header, 1)).first(offsetof(BlobHeader, header_checksum)));
  EPCTX_RETURN_IF_ERROR(sink.WriteAt(0, std::as_bytes(std::span(&header, 1))));
  return header.header_checksum;
}

Result<BlobWriter> BlobWriter::ToFile(TargetFingerprint target, const std::string& path) {
  BlobWriter writer(target);
  EPCTX_ASSIGN_OR_RETURN(AtomicFileWriter file, AtomicFileWriter::Create(path));
  writer.stream_ = std::make_unique<Stream>(std::move(file));
  // An all-zero header page first: until the real header lands last, the file cannot verify.
  std::vector<std::byte> zero_page(kHeaderPageSize);
  EPCTX_RETURN_IF_ERROR(writer.stream_->Write(0, zero_page));
  return writer;
}

Status BlobWriter::Finish(uint64_t* identity) {
  if (stream_ == nullptr) {
    return EPCTX_ERROR(kInternal, "Finish is for a streaming blob writer (BlobWriter::ToFile)");
  }
  EPCTX_ASSIGN_OR_RETURN(Layout layout, ComputeLayout());
  EPCTX_ASSIGN_OR_RETURN(uint64_t checksum, Emit(layout, stream_->sink(), true));
  EPCTX_RETURN_IF_ERROR(stream_->Commit());
  stream_.reset();
  weights_hash_.reset();
  if (identity != nullptr) *identity = checksum;
  return Status::Ok();
}

Status BlobWriter::WriteToFile(const std::string& path, uint64_t* identity) const {
  if (stream_ != nullptr || weights_hash_ == nullptr) {
    return EPCTX_ERROR(kInternal, "a streaming blob writer keeps no weights: use Finish");
  }
  EPCTX_ASSIGN_OR_RETURN(Layout layout, ComputeLayout());
  EPCTX_ASSIGN_OR_RETURN(AtomicFileWriter writer, AtomicFileWriter::Create(path));
  ChunkedFileSink sink(writer);
  EPCTX_ASSIGN_OR_RETURN(uint64_t checksum, Emit(layout, sink, false));
  EPCTX_RETURN_IF_ERROR(sink.Flush());
  EPCTX_RETURN_IF_ERROR(writer.Commit());
  if (identity != nullptr) *identity = checksum;
  return Status::Ok();
}

Result<AlignedBuffer> BlobWriter::WriteToMemory() const {
  if (stream_ != nullptr || weights_hash_ == nullptr) {
    return EPCTX_ERROR(kInternal, "a streaming blob writer keeps no weights: use Finish");
  }
  EPCTX_ASSIGN_OR_RETURN(Layout layout, ComputeLayout());
  AlignedBuffer buffer(layout.file_size);
  if (!buffer.valid()) {
    return EPCTX_ERROR(kInternal, "out of memory for a {}-byte in-memory blob", layout.file_size);
  }
  MemorySink sink(buffer);
  EPCTX_RETURN_IF_ERROR(Emit(layout, sink, false).status());
  return buffer;
}

}  // namespace epctx::format
