#include "loader/blob_registry.h"

#include "epctx/env.h"
#include "loader/page_residency.h"
#include "util/cpu_features.h"
#include "util/logging.h"
#include "util/page_cache.h"
#include "util/status_macros.h"

namespace epctx::loader {
namespace {

format::OpenOptions OpenOptionsFor(const BlobLoadOptions& options) {
  format::OpenOptions o;
  o.available_cpu_features = options.compiled_here ? ~uint64_t{0} : DetectedCpuFeatures();
  o.verify_weight_checksums = options.verify_weights;
  return o;
}

}  // namespace

BlobRegistry& BlobRegistry::Global() {
  static BlobRegistry* registry = new BlobRegistry();
  return *registry;
}

BlobRegistry::LoadResult BlobRegistry::Load(const std::string& path, const BlobLoadOptions& options,
                                            FileIdentity* loaded_id) {
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<BlobSource> source,
                         OpenBlobSource(path, options.load_mode));
  // The identity of what was actually opened (the file may have been replaced since the stat).
  *loaded_id = source->identity();
  EPCTX_ASSIGN_OR_RETURN(format::BlobView view,
                         format::BlobView::Open(source->bytes(), path, OpenOptionsFor(options)));
  return std::shared_ptr<const LoadedBlob>(
      std::make_shared<const LoadedBlob>(std::move(source), std::move(view), options.load_mode));
}

LoadMode BlobRegistry::ResolveAuto(const std::string& path, const FileIdentity& id) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [key, weak] : blobs_) {
      if (key.first == id && !weak.expired()) return key.second;
    }
  }
  Result<Residency> resident = SampledPageCacheResidency(path, kResidencySamples);
  if (!resident.ok()) {
    // The open that follows reports what is wrong with the file, if anything.
    Logger().debug("'{}': residency not sampled ({}); load mode mmap", path,
                   resident.status().message());
    return LoadMode::kMmap;
  }
  const LoadMode mode = LoadModeForResidency(resident->resident_pages, resident->total_pages);
  Logger().debug("'{}': {} of {} sampled pages in the page cache: load mode {}", path,
                 resident->resident_pages, resident->total_pages, LoadModeName(mode));
  return mode;
}

Result<std::shared_ptr<const LoadedBlob>> BlobRegistry::Acquire(const std::string& path,
                                                                const BlobLoadOptions& requested) {
  EPCTX_ASSIGN_OR_RETURN(FileIdentity id, StatFile(path));
  BlobLoadOptions options = requested;
  if (options.load_mode == LoadMode::kAuto) options.load_mode = ResolveAuto(path, id);
  const Key key{id, options.load_mode};
  std::shared_ptr<const LoadedBlob> existing;
  std::shared_future<LoadResult> pending;
  std::promise<LoadResult> promise;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blobs_.find(key);
    if (it != blobs_.end()) {
      existing = it->second.lock();
      // A blob changed under its mapping is loaded again; sessions holding the old one keep it
      // (and report the damage when they run).
      if (existing && !existing->CheckIntact().ok()) existing.reset();
      if (!existing) blobs_.erase(it);
    }
    if (!existing) {
      auto loading = loading_.find(key);
      if (loading != loading_.end()) {
        pending = loading->second;
      } else {
        loading_[key] = promise.get_future().share();
      }
    }
  }
  if (existing) {
    // A verified copy exists; weight verification, if asked for now, is still owed.
    if (options.verify_weights) {
      auto reverify =
          format::BlobView::Open(existing->view().bytes(), path, OpenOptionsFor(options));
      if (!reverify.ok()) return reverify.status();
    }
    return existing;
  }
  if (pending.valid()) {
    LoadResult loaded = pending.get();  // another caller is loading this blob: share its result
    if (loaded.ok() && options.verify_weights) {
      auto reverify =
          format::BlobView::Open((*loaded)->view().bytes(), path, OpenOptionsFor(options));
      if (!reverify.ok()) return reverify.status();
    }
    return loaded;
  }

  FileIdentity loaded_id = id;
  LoadResult loaded = EPCTX_ERROR(kInternal, "'{}' was not loaded", path);
  try {
    loaded = Load(path, options, &loaded_id);
  } catch (const std::exception& e) {
    // Whoever waits for this load must not wait forever.
    loaded = EPCTX_ERROR(kInternal, "loading '{}' failed: {}", path, e.what());
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    loading_.erase(key);
    if (loaded.ok()) blobs_[Key{loaded_id, options.load_mode}] = *loaded;
  }
  promise.set_value(loaded);
  if (loaded.ok()) {
    Logger().debug("loaded blob '{}' ({} bytes, load mode {})", path, loaded_id.size,
                   LoadModeName(options.load_mode));
  }
  return loaded;
}

size_t BlobRegistry::MappedCount() {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const auto& [id, weak] : blobs_) {
    if (!weak.expired()) ++n;
  }
  return n;
}

Result<std::shared_ptr<const LoadedBlob>> LoadBlobFromBuffer(AlignedBuffer buffer,
                                                             const std::string& name,
                                                             const BlobLoadOptions& options) {
  std::unique_ptr<BlobSource> source = MakeBufferBlobSource(std::move(buffer));
  EPCTX_ASSIGN_OR_RETURN(format::BlobView view,
                         format::BlobView::Open(source->bytes(), name, OpenOptionsFor(options)));
  return std::shared_ptr<const LoadedBlob>(
      std::make_shared<const LoadedBlob>(std::move(source), std::move(view)));
}

}  // namespace epctx::loader

namespace epctx {
size_t MappedBlobCount() {
  return loader::BlobRegistry::Global().MappedCount();
}
}  // namespace epctx
