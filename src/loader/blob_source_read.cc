// epctx.load_mode=read: for file systems where mapping is unwanted. The blob is read with io_uring
// (O_DIRECT where the file system allows it, else through the page cache, with the reason logged)
// into 2 MiB-aligned anonymous memory advised for transparent huge pages, then made read-only.
// Nothing of the file stays mapped or open: the blob may be deleted or replaced afterwards.
#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "loader/blob_source.h"
#include "loader/uring_file_reader.h"
#include "util/anonymous_memory.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace epctx::loader {
namespace {

class ReadBlobSource final : public BlobSource {
 public:
  ReadBlobSource(AnonymousMemory memory, FileIdentity identity)
      : memory_(std::move(memory)), identity_(identity) {}
  std::span<const std::byte> bytes() const override {
    return {memory_.data(), static_cast<size_t>(identity_.size)};
  }
  const FileIdentity& identity() const override { return identity_; }

 private:
  AnonymousMemory memory_;
  FileIdentity identity_;
};

// The file opened with O_DIRECT, or without it when the file system refuses (tmpfs on older
// kernels, some FUSE and network file systems). `*direct` says which.
Result<UniqueFd> OpenForReading(const std::string& path, bool* direct) {
  auto fd = OpenReadOnly(path, O_DIRECT);
  if (fd.ok()) {
    *direct = true;
    return fd;
  }
  if (fd.status().code() == StatusCode::kNotFound) return fd.status();
  Logger().info("'{}': O_DIRECT refused ({}); reading through the page cache", path,
                fd.status().message());
  *direct = false;
  return OpenReadOnly(path);
}

Status ClearDirect(const UniqueFd& fd, const std::string& path) {
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_DIRECT) != 0) {
    return EPCTX_ERROR(kIoError, "'{}': cannot turn O_DIRECT off: {}", path, std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<BlobSource>> OpenReadBlobSource(const std::string& path) {
  bool direct = false;
  EPCTX_ASSIGN_OR_RETURN(UniqueFd fd, OpenForReading(path, &direct));
  EPCTX_ASSIGN_OR_RETURN(FileIdentity before, StatFd(fd, path));
  if (before.size == 0) return EPCTX_ERROR(kCorrupt, "'{}': file is empty", path);
  EPCTX_ASSIGN_OR_RETURN(AnonymousMemory memory,
                         AnonymousMemory::Allocate(static_cast<size_t>(before.size),
                                                   AnonymousMemory::kHugePageSize, true));
  Status read = ReadFileWithUring(fd.get(), before.size, memory.mutable_bytes(), direct, path);
  if (!read.ok() && direct) {
    // Some file systems accept O_DIRECT at open but not the reads (alignment rules, FUSE).
    Logger().info("'{}': O_DIRECT reads failed ({}); reading through the page cache", path,
                  read.message());
    EPCTX_RETURN_IF_ERROR(ClearDirect(fd, path));
    read = ReadFileWithUring(fd.get(), before.size, memory.mutable_bytes(), false, path);
  }
  EPCTX_RETURN_IF_ERROR(read);
  EPCTX_ASSIGN_OR_RETURN(FileIdentity after, StatFd(fd, path));
  if (!(after == before)) {
    return EPCTX_ERROR(kIoError, "'{}': the file changed while it was being read", path);
  }
  EPCTX_RETURN_IF_ERROR(memory.MakeReadOnly());
  return std::unique_ptr<BlobSource>(std::make_unique<ReadBlobSource>(std::move(memory), before));
}

}  // namespace epctx::loader
