// Memory of a process as `epctx perf` reports it, from one read of /proc/<pid>/smaps (the sums
// over its mappings, which smaps_rollup would give too, read in the same pass as the blob's).
//
// Every resident page of a mapping is anonymous or backed by a file (or shmem), so
//   rss == anon + blob_mapped_rss + other_file_rss
// where other_file_rss is the file-backed remainder: the epctx binary's and shared libraries'
// resident text and read-only data, and any other mapped file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "epctx/status.h"

namespace epctx::cli {

// The file whose mappings are counted as "the blob": matched by device and inode.
struct BlobFileId {
  bool valid = false;
  uint64_t device = 0;
  uint64_t inode = 0;
};
// The identity of the blob at `path`; invalid when `path` is empty or cannot be stat'ed.
BlobFileId IdentifyBlobFile(const std::string& path);

struct MemorySample {
  std::string step;
  uint64_t rss_bytes = 0;              // Rss summed over the mappings
  uint64_t pss_bytes = 0;              // Pss summed
  uint64_t anon_bytes = 0;             // Anonymous summed
  uint64_t blob_mapped_rss_bytes = 0;  // sum of Rss over the blob's mappings (smaps)
  uint64_t blob_mapped_pss_bytes = 0;  // sum of Pss over the blob's mappings (smaps)
  uint64_t other_file_rss_bytes = 0;   // sum over other mappings of (Rss - Anonymous) (smaps)
};

// The memory of process `pid` (0: this process) now, labelled `step`.
Result<MemorySample> SampleMemory(pid_t pid, const BlobFileId& blob, std::string step);

}  // namespace epctx::cli
