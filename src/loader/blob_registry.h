// The process-wide registry of context blobs: each blob file is loaded (mapped, or read, as the
// load mode says; see blob_source.h) and verified once per load mode, and every session of every
// model in it shares that copy. The copy goes when the last session holding it does.
#pragma once

#include <atomic>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "epctx/status.h"
#include "format/blob_reader.h"
#include "loader/blob_source.h"
#include "loader/engine_options.h"
#include "util/aligned_buffer.h"
#include "util/file.h"

namespace epctx::loader {

// A verified blob and the memory that holds it (see blob_source.h).
class LoadedBlob {
 public:
  // `load_mode`: how a blob file was brought in (auto resolved); kAuto for a blob in memory.
  LoadedBlob(std::unique_ptr<BlobSource> source, format::BlobView view,
             LoadMode load_mode = LoadMode::kAuto)
      : source_(std::move(source)), view_(std::move(view)), load_mode_(load_mode) {}
  const format::BlobView& view() const { return view_; }
  LoadMode load_mode() const { return load_mode_; }
  const BlobSource& source() const { return *source_; }
  // See BlobSource::CheckIntact.
  Status CheckIntact() const { return source_->CheckIntact(); }
  bool known_damaged() const { return source_->known_damaged(); }
  // BlobSource::MapAhead, the first time it is asked for (later calls return at once, except
  // after a call that was stopped midway or left chunks to a run: another session's job maps
  // those). Returns whether this call mapped it all.
  bool MapAheadOnce(const std::atomic<bool>& stop, const std::atomic<bool>& leave_cached) const {
    if (map_ahead_asked_.exchange(true)) return false;
    const bool done = source_->MapAhead(stop, leave_cached);
    if (!done &&
        (stop.load(std::memory_order_relaxed) || leave_cached.load(std::memory_order_relaxed))) {
      map_ahead_asked_.store(false);
    }
    return done;
  }

 private:
  std::unique_ptr<BlobSource> source_;
  format::BlobView view_;
  LoadMode load_mode_;
  mutable std::atomic<bool> map_ahead_asked_{false};
};

struct BlobLoadOptions {
  LoadMode load_mode = LoadMode::kAuto;  // epctx.load_mode (files only)
  bool verify_weights = false;           // epctx.verify_weights
  // A blob this process compiled just now: its target is this build on this CPU by construction,
  // so the CPU-feature check (which tests may narrow with EPCTX_CPU_FEATURES_MASK) is skipped.
  bool compiled_here = false;
};

class BlobRegistry {
 public:
  static BlobRegistry& Global();

  // The blob at `path`: the existing one when this file (same device, inode, size and mtime) is
  // already loaded with the same load mode, else newly loaded that way and verified before it is
  // shared. Load mode auto takes the file as it is loaded already in any mode, else chooses by
  // the file's residency in the page cache (page_residency.h). Each load mode keeps its own copy: a
  // populated mapping is not handed to a lazy-mode session, nor a read-mode buffer to a mapping
  // one. A load (a whole read of the file in `read` mode) does not hold up acquiring other blobs;
  // callers asking for the same blob meanwhile wait for that one load.
  Result<std::shared_ptr<const LoadedBlob>> Acquire(const std::string& path,
                                                    const BlobLoadOptions& options);
  // Number of blob files loaded right now (mapped, or read into memory), per load mode.
  size_t MappedCount();

 private:
  using Key = std::pair<FileIdentity, LoadMode>;
  using LoadResult = Result<std::shared_ptr<const LoadedBlob>>;
  // For load mode auto: the mode of a live copy of the file, else the one its residency says.
  LoadMode ResolveAuto(const std::string& path, const FileIdentity& id);
  // Opens and verifies the blob, without the registry's lock.
  static LoadResult Load(const std::string& path, const BlobLoadOptions& options,
                         FileIdentity* loaded_id);

  std::mutex mutex_;
  std::map<Key, std::weak_ptr<const LoadedBlob>> blobs_;
  std::map<Key, std::shared_future<LoadResult>> loading_;
};

// A blob held in memory (embedded in a context model, or compiled just now): verified, not shared.
Result<std::shared_ptr<const LoadedBlob>> LoadBlobFromBuffer(AlignedBuffer buffer,
                                                             const std::string& name,
                                                             const BlobLoadOptions& options);

}  // namespace epctx::loader
