// epctx.load_mode=prefetch: the guarded mapping of mmap mode, plus a BlobPrefetcher that reads
// the WEIGHTS section in the background from the moment the file is opened.
#include <algorithm>
#include <cstring>

#include "format/blob_layout.h"
#include "loader/blob_prefetcher.h"
#include "loader/blob_source.h"
#include "loader/guarded_mapping.h"
#include "util/status_macros.h"

namespace epctx::loader {
namespace {

struct Range {
  uint64_t offset = 0;
  uint64_t length = 0;
};

// The WEIGHTS section as the header declares it, clamped to the file. Read before the blob is
// verified so that the prefetch starts at once: a lying header costs at most a useless prefetch of
// bytes inside the file, and verification then refuses the blob.
Range WeightsSection(std::span<const std::byte> file) {
  format::BlobHeader header;
  if (file.size() < sizeof header) return {};
  std::memcpy(&header, file.data(), sizeof header);
  if (std::memcmp(header.magic, format::kBlobMagic, sizeof header.magic) != 0) return {};
  uint32_t count = std::min(header.section_count, format::kMaxSections);
  for (uint32_t i = 0; i < count; ++i) {
    const format::SectionEntry& s = header.sections[i];
    if (s.kind != static_cast<uint32_t>(format::SectionKind::kWeights)) continue;
    if (s.offset >= file.size()) return {};
    return {s.offset, std::min<uint64_t>(s.size, file.size() - s.offset)};
  }
  return {};
}

class PrefetchedBlobSource final : public BlobSource {
 public:
  PrefetchedBlobSource(std::unique_ptr<GuardedMapping> mapping, const std::string& path)
      : mapping_(std::move(mapping)) {
    Range weights = WeightsSection(mapping_->bytes());
    prefetcher_ = std::make_unique<BlobPrefetcher>(mapping_->bytes(), weights.offset,
                                                   weights.length, mapping_->fd(), path);
  }
  std::span<const std::byte> bytes() const override { return mapping_->bytes(); }
  const FileIdentity& identity() const override { return mapping_->identity(); }
  Status CheckIntact() const override { return mapping_->CheckIntact(); }
  bool known_damaged() const override { return mapping_->known_damaged(); }

 private:
  // Destroyed in reverse order: the prefetcher stops before the mapping and its fd go.
  std::unique_ptr<GuardedMapping> mapping_;
  std::unique_ptr<BlobPrefetcher> prefetcher_;
};

}  // namespace

Result<std::unique_ptr<BlobSource>> OpenPrefetchedBlobSource(const std::string& path) {
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<GuardedMapping> mapping,
                         GuardedMapping::Open(path, /*populate=*/false));
  return std::unique_ptr<BlobSource>(
      std::make_unique<PrefetchedBlobSource>(std::move(mapping), path));
}

}  // namespace epctx::loader
