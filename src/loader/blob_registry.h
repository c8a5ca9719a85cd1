// The process-wide registry of context blobs: each blob file is mapped and verified once, and
// every session of every model in it shares that mapping. The mapping goes when the last session
// holding it does.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <variant>

#include "epctx/status.h"
#include "format/blob_reader.h"
#include "util/aligned_buffer.h"
#include "util/file.h"

namespace epctx::loader {

// A verified blob and the memory that holds it (a file mapping or a heap buffer).
class LoadedBlob {
 public:
  LoadedBlob(std::variant<MappedFile, AlignedBuffer> storage, format::BlobView view)
      : storage_(std::move(storage)), view_(std::move(view)) {}
  const format::BlobView& view() const { return view_; }
  bool is_mapped_file() const { return std::holds_alternative<MappedFile>(storage_); }

 private:
  std::variant<MappedFile, AlignedBuffer> storage_;
  format::BlobView view_;
};

struct BlobLoadOptions {
  bool populate = false;        // pre-fault the mapping (epctx.load_mode=populate)
  bool verify_weights = false;  // epctx.verify_weights
  // A blob this process compiled just now: its target is this build on this CPU by construction,
  // so the CPU-feature check (which tests may narrow with EPCTX_CPU_FEATURES_MASK) is skipped.
  bool compiled_here = false;
};

class BlobRegistry {
 public:
  static BlobRegistry& Global();

  // The blob at `path`: the existing mapping when this file (same device, inode, size and mtime)
  // is already mapped, else a new mapping, verified before it is shared.
  Result<std::shared_ptr<const LoadedBlob>> Acquire(const std::string& path,
                                                    const BlobLoadOptions& options);
  // Number of blob files mapped right now.
  size_t MappedCount();

 private:
  std::mutex mutex_;
  std::map<FileIdentity, std::weak_ptr<const LoadedBlob>> blobs_;
};

// A blob held in memory (embedded in a context model, or compiled just now): verified, not shared.
Result<std::shared_ptr<const LoadedBlob>> LoadBlobFromBuffer(AlignedBuffer buffer,
                                                             const std::string& name,
                                                             const BlobLoadOptions& options);

}  // namespace epctx::loader
