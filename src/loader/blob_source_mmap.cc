// epctx.load_mode=mmap and populate: a shared read-only mapping of the blob's weights, lazily
// faulted or pre-faulted (MAP_POPULATE), so processes share their pages through the page cache;
// the rest of the file is copied at load (see guarded_mapping.h).
#include "loader/blob_source.h"
#include "loader/guarded_mapping.h"
#include "util/status_macros.h"

namespace epctx::loader {
namespace {

class MappedBlobSource final : public BlobSource {
 public:
  explicit MappedBlobSource(std::unique_ptr<GuardedMapping> mapping)
      : mapping_(std::move(mapping)) {}
  std::span<const std::byte> bytes() const override { return mapping_->bytes(); }
  const FileIdentity& identity() const override { return mapping_->identity(); }
  Status CheckIntact() const override { return mapping_->CheckIntact(); }
  bool known_damaged() const override { return mapping_->known_damaged(); }

 private:
  std::unique_ptr<GuardedMapping> mapping_;
};

}  // namespace

Result<std::unique_ptr<BlobSource>> OpenMappedBlobSource(const std::string& path, bool populate) {
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<GuardedMapping> mapping,
                         GuardedMapping::Open(path, populate));
  return std::unique_ptr<BlobSource>(std::make_unique<MappedBlobSource>(std::move(mapping)));
}

}  // namespace epctx::loader
