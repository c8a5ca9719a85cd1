#include "loader/blob_source.h"

#include "util/status_macros.h"

namespace epctx::loader {
namespace {

class BufferBlobSource final : public BlobSource {
 public:
  explicit BufferBlobSource(AlignedBuffer buffer) : buffer_(std::move(buffer)) {}
  std::span<const std::byte> bytes() const override { return buffer_.bytes(); }
  const FileIdentity& identity() const override { return identity_; }

 private:
  AlignedBuffer buffer_;
  FileIdentity identity_;
};

}  // namespace

Result<std::unique_ptr<BlobSource>> OpenBlobSource(const std::string& path, LoadMode mode) {
  switch (mode) {
    case LoadMode::kAuto:
      return EPCTX_ERROR(kInternal, "'{}': load mode auto is resolved before a blob is opened",
                         path);
    case LoadMode::kMmap:
      return OpenMappedBlobSource(path, /*populate=*/false);
    case LoadMode::kPopulate:
      return OpenMappedBlobSource(path, /*populate=*/true);
    case LoadMode::kPrefetch:
      return OpenPrefetchedBlobSource(path);
    case LoadMode::kRead:
      return OpenReadBlobSource(path);
  }
  return OpenMappedBlobSource(path, /*populate=*/false);
}

std::unique_ptr<BlobSource> MakeBufferBlobSource(AlignedBuffer buffer) {
  return std::make_unique<BufferBlobSource>(std::move(buffer));
}

}  // namespace epctx::loader
