// epctx.load_mode=mmap and populate: a shared read-only mapping of the blob's weights, lazily
// faulted or pre-faulted (MAP_POPULATE), so processes share their pages through the page cache;
// the rest of the file is copied at load (see guarded_mapping.h). In mmap mode a session's
// kernel-preparation job maps the whole file ahead of the first run (MapAhead).
#include <sys/mman.h>

#include <algorithm>

#include "loader/blob_source.h"
#include "loader/guarded_mapping.h"
#include "util/page_cache.h"
#include "util/status_macros.h"

namespace epctx::loader {
namespace {

// Per madvise call of MapAhead: a cancelled session waits for at most one chunk (from the disk,
// when the page cache lost the blob: tens of milliseconds). A multiple of 2 MiB, the mapping's
// alignment, so that huge page-cache folios are mapped whole.
constexpr size_t kMapAheadChunk = size_t{16} << 20;

// Whether every page of [chunk, chunk + n) is in the page cache (MappedRangeResidency: where
// the kernel does not tell, pages not mapped yet count as not cached, and are mapped ahead).
bool WhollyCached(const std::byte* chunk, size_t n) {
  Result<Residency> r = MappedRangeResidency({chunk, n});
  return r.ok() && r->resident_pages == r->total_pages;
}

class MappedBlobSource final : public BlobSource {
 public:
  MappedBlobSource(std::unique_ptr<GuardedMapping> mapping, bool populated)
      : mapping_(std::move(mapping)), populated_(populated) {}
  std::span<const std::byte> bytes() const override { return mapping_->bytes(); }
  const FileIdentity& identity() const override { return mapping_->identity(); }
  Status CheckIntact() const override { return mapping_->CheckIntact(); }
  bool known_damaged() const override { return mapping_->known_damaged(); }
  // MADV_POPULATE_READ (Linux 5.14): page-table entries for the whole file, read from the page
  // cache (or the disk). Unlike touching the pages it cannot raise SIGBUS: a range the file no
  // longer covers fails the call instead. On older kernels nothing is done.
  bool MapAhead(const std::atomic<bool>& stop,
                const std::atomic<bool>& leave_cached) const override {
    if (populated_) return false;
    std::span<const std::byte> b = mapping_->bytes();
    bool all = true;
    for (size_t at = 0; at < b.size(); at += kMapAheadChunk) {
      if (stop.load(std::memory_order_relaxed) || mapping_->known_damaged()) return false;
      std::byte* chunk = const_cast<std::byte*>(b.data() + at);
      const size_t n = std::min(kMapAheadChunk, b.size() - at);
      if (leave_cached.load(std::memory_order_relaxed) && WhollyCached(chunk, n)) {
        all = false;
        continue;
      }
      if (::madvise(chunk, n, MADV_POPULATE_READ) != 0) return false;
    }
    return all;
  }

 private:
  std::unique_ptr<GuardedMapping> mapping_;
  bool populated_;  // MAP_POPULATE did it at open
};

}  // namespace

Result<std::unique_ptr<BlobSource>> OpenMappedBlobSource(const std::string& path, bool populate) {
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<GuardedMapping> mapping,
                         GuardedMapping::Open(path, populate));
  return std::unique_ptr<BlobSource>(
      std::make_unique<MappedBlobSource>(std::move(mapping), populate));
}

}  // namespace epctx::loader
