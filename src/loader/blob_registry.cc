#include "loader/blob_registry.h"

#include "epctx/env.h"
#include "util/cpu_features.h"
#include "util/logging.h"
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

Result<std::shared_ptr<const LoadedBlob>> BlobRegistry::Acquire(const std::string& path,
                                                                const BlobLoadOptions& options) {
  EPCTX_ASSIGN_OR_RETURN(FileIdentity id, StatFile(path));
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blobs_.find(Key{id, options.load_mode});
  if (it != blobs_.end()) {
    if (auto blob = it->second.lock()) {
      // A verified mapping exists; weight verification, if asked for now, is still owed.
      if (options.verify_weights) {
        auto reverify = format::BlobView::Open(blob->view().bytes(), path, OpenOptionsFor(options));
        if (!reverify.ok()) return reverify.status();
      }
      return blob;
    }
    blobs_.erase(it);
  }
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<BlobSource> source,
                         OpenBlobSource(path, options.load_mode));
  // The identity of what was actually opened (the file may have been replaced since the stat).
  FileIdentity loaded_id = source->identity();
  EPCTX_ASSIGN_OR_RETURN(format::BlobView view,
                         format::BlobView::Open(source->bytes(), path, OpenOptionsFor(options)));
  auto blob = std::make_shared<const LoadedBlob>(std::move(source), std::move(view));
  blobs_[Key{loaded_id, options.load_mode}] = blob;
  Logger().debug("loaded blob '{}' ({} bytes, load mode {})", path, loaded_id.size,
                 compile::LoadModeName(options.load_mode));
  return std::shared_ptr<const LoadedBlob>(blob);
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
