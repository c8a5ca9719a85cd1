// Where a context blob's bytes live: one small interface with one implementation per load mode
// (epctx.load_mode), each in its own file:
//   blob_source_mmap.cc      mmap and populate: a shared read-only mapping of the file
//   blob_source_prefetch.cc  prefetch: the lazy mapping plus a BlobPrefetcher (blob_prefetcher.h)
//   blob_source_read.cc      read: io_uring reads into anonymous memory; no mapping, no open fd
//   blob_source.cc           a buffer already in memory, and the dispatch on the mode
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <string>

#include "epctx/status.h"
#include "loader/engine_options.h"
#include "util/aligned_buffer.h"
#include "util/file.h"

namespace epctx::loader {

class BlobSource {
 public:
  virtual ~BlobSource() = default;
  // The whole blob, valid for the lifetime of the source.
  virtual std::span<const std::byte> bytes() const = 0;
  // The file the bytes came from, as it was when opened (all zero for an in-memory buffer).
  virtual const FileIdentity& identity() const = 0;
  // OK while the bytes are those that were loaded and verified; kIoError naming the file once it
  // was changed or truncated under a mapping (see guarded_mapping.h). Copies in memory (read
  // mode, buffers) cannot change.
  virtual Status CheckIntact() const { return Status::Ok(); }
  // What CheckIntact would find already known, without a system call.
  virtual bool known_damaged() const { return false; }
  // Maps the bytes into this process's page tables now, where the first kernel to touch them
  // would otherwise fault them in (lazy mappings); copies in memory have nothing to do. Works in
  // chunks and stops between two once `stop` is set. Once `leave_cached` is set, chunks wholly in
  // the page cache are skipped (a run started: it faults those in quickly itself), and only
  // those it would read from the disk are still mapped ahead. Best effort: returns whether all
  // was mapped.
  virtual bool MapAhead(const std::atomic<bool>& /*stop*/,
                        const std::atomic<bool>& /*leave_cached*/) const {
    return false;
  }
};

// Opens the blob file at `path` the way `mode` says.
Result<std::unique_ptr<BlobSource>> OpenBlobSource(const std::string& path, LoadMode mode);

Result<std::unique_ptr<BlobSource>> OpenMappedBlobSource(const std::string& path, bool populate);
Result<std::unique_ptr<BlobSource>> OpenPrefetchedBlobSource(const std::string& path);
Result<std::unique_ptr<BlobSource>> OpenReadBlobSource(const std::string& path);
// A blob already in memory (embedded in a context model, or compiled just now).
std::unique_ptr<BlobSource> MakeBufferBlobSource(AlignedBuffer buffer);

}  // namespace epctx::loader
