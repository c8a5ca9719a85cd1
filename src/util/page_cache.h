// The page cache as seen from one file: dropping its pages, and counting those resident.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "epctx/status.h"

namespace epctx {

// Drops `path`'s pages from the page cache: fsync first (dirty pages cannot be dropped), then
// posix_fadvise(POSIX_FADV_DONTNEED). Pages that some process has mapped stay resident; check
// with PageCacheResidency.
Status EvictFromPageCache(const std::string& path);

struct Residency {
  uint64_t resident_pages = 0;
  uint64_t total_pages = 0;
  double fraction() const {
    return total_pages == 0
               ? 0.0
               : static_cast<double>(resident_pages) / static_cast<double>(total_pages);
  }
};

// How many pages of `range`, a part of a mapping of a file, are in the page cache: mincore(2),
// which faults nothing in. The range's start is taken from its page's start. Where the kernel
// reports only the caller's own mappings (a file it could not write: Linux 5.2's restriction of
// mincore), pages not mapped yet count as not resident.
Result<Residency> MappedRangeResidency(std::span<const std::byte> range);

// How many pages of bytes [offset, offset + length) of `path` (clamped to the file) are in the
// page cache: MappedRangeResidency on a fresh read-only mapping.
Result<Residency> PageCacheResidency(const std::string& path, uint64_t offset = 0,
                                     uint64_t length = UINT64_MAX);

// The same judged from `samples` pages spread evenly from the file's first page to its last
// (one mincore per page): what a load-mode choice can afford on every first load of a
// multi-GB file, where the full count walks every page. An empty file has no pages.
Result<Residency> SampledPageCacheResidency(const std::string& path, uint64_t samples);

}  // namespace epctx
