// epctx.load_mode=mmap and populate: a shared read-only mapping of the blob file, lazily faulted
// or pre-faulted (MAP_POPULATE). The page cache backs it, so processes share its pages.
#include "loader/blob_source.h"
#include "util/status_macros.h"

namespace epctx::loader {
namespace {

class MappedBlobSource final : public BlobSource {
 public:
  explicit MappedBlobSource(MappedFile file) : file_(std::move(file)) {}
  std::span<const std::byte> bytes() const override { return file_.bytes(); }
  const FileIdentity& identity() const override { return file_.identity(); }

 private:
  MappedFile file_;
};

}  // namespace

Result<std::unique_ptr<BlobSource>> OpenMappedBlobSource(const std::string& path, bool populate) {
  EPCTX_ASSIGN_OR_RETURN(
      MappedFile file,
      MappedFile::Open(path, populate ? MappedFile::Populate::kYes : MappedFile::Populate::kNo));
  return std::unique_ptr<BlobSource>(std::make_unique<MappedBlobSource>(std::move(file)));
}

}  // namespace epctx::loader
