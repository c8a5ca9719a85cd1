#include "loader/guarded_mapping.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "format/blob_layout.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace epctx::loader {
namespace {

uint64_t PageSize() {
  static const uint64_t page = [] {
    long p = ::sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<uint64_t>(p) : uint64_t{4096};
  }();
  return page;
}

uint64_t RoundUp(uint64_t v, uint64_t to) {
  return (v + to - 1) / to * to;
}

// Replaces mapped bytes [begin, end) of `base` (`begin` page aligned) with a private, read-only
// copy at the same addresses: copied into fresh anonymous memory, then moved over the range.
Status CopyIntoPrivate(std::byte* base, uint64_t begin, uint64_t end, const std::string& path) {
  if (begin >= end) return Status::Ok();
  const size_t length = RoundUp(end - begin, PageSize());
  void* copy = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (copy == MAP_FAILED) {
    return EPCTX_ERROR(kIoError, "'{}': cannot map {} bytes for its programs: {}", path, length,
                       std::strerror(errno));
  }
  // A fault while copying (the file truncated meanwhile) reads zeros: verification refuses them.
  std::memcpy(copy, base + begin, end - begin);
  if (::mprotect(copy, length, PROT_READ) != 0 ||
      ::mremap(copy, length, length, MREMAP_MAYMOVE | MREMAP_FIXED, base + begin) == MAP_FAILED) {
    int err = errno;
    ::munmap(copy, length);
    return EPCTX_ERROR(kIoError, "'{}': cannot move its programs into private memory: {}", path,
                       std::strerror(err));
  }
  return Status::Ok();
}

// Copies everything outside the WEIGHTS section into private memory. The header is copied first
// and the sections are found in the copy, which is what verification reads afterwards; a header
// that names no usable WEIGHTS section leaves the rest shared, and verification refuses it.
Status PrivatizeAllButWeights(std::span<const std::byte> file, const std::string& path) {
  auto* base = const_cast<std::byte*>(file.data());
  const uint64_t size = file.size();
  const uint64_t page = PageSize();
  const uint64_t first = std::min(size, page);
  EPCTX_RETURN_IF_ERROR(CopyIntoPrivate(base, 0, first, path));
  uint64_t weights_begin = first, weights_end = RoundUp(size, page);
  if (size >= sizeof(format::BlobHeader)) {
    format::BlobHeader h;
    std::memcpy(&h, base, sizeof h);
    for (uint32_t i = 0; i < std::min(h.section_count, format::kMaxSections); ++i) {
      const format::SectionEntry& s = h.sections[i];
      if (s.kind != static_cast<uint32_t>(format::SectionKind::kWeights)) continue;
      if (s.offset % page != 0 || s.offset < page || s.offset > size) break;
      weights_begin = s.offset;
      weights_end = RoundUp(s.offset + std::min(s.size, size - s.offset), page);
      break;
    }
  }
  EPCTX_RETURN_IF_ERROR(CopyIntoPrivate(base, first, weights_begin, path));
  return CopyIntoPrivate(base, weights_end, size, path);
}

}  // namespace

Result<std::unique_ptr<GuardedMapping>> GuardedMapping::Open(const std::string& path,
                                                             bool populate) {
  auto m = std::unique_ptr<GuardedMapping>(new GuardedMapping());
  m->path_ = path;
  EPCTX_ASSIGN_OR_RETURN(m->fd_, OpenReadOnly(path));
  // Before anything is read: a write from now on is seen.
  std::string why;
  m->watch_ = ChangeWatch::Watch(m->fd_, &why);
  if (!m->watch_.available()) {
    Logger().debug("'{}': {}; changes to it are noticed by size and mtime only", path, why);
  }
  EPCTX_ASSIGN_OR_RETURN(
      m->file_, MappedFile::Map(m->fd_, path,
                                populate ? MappedFile::Populate::kYes : MappedFile::Populate::kNo,
                                MappedFile::HugePages::kAdvise));
  EPCTX_ASSIGN_OR_RETURN(
      m->guard_,
      FaultGuard::Register(m->file_.bytes().data(), RoundUp(m->file_.bytes().size(), PageSize())));
  EPCTX_RETURN_IF_ERROR(PrivatizeAllButWeights(m->file_.bytes(), path));
  return m;
}

bool GuardedMapping::known_damaged() const {
  return guard_.damaged() || changed_.load();
}

Status GuardedMapping::CheckIntact() const {
  if (guard_.damaged()) {
    return EPCTX_ERROR(
        kIoError, "blob '{}' was truncated while in use: some of its pages read as zeros", path_);
  }
  if (watch_.changed()) {
    changed_ = true;
    return EPCTX_ERROR(kIoError, "blob '{}' was written to while in use", path_);
  }
  auto now = StatFd(fd_, path_);
  if (!now.ok() || !(*now == file_.identity())) {
    changed_ = true;
    return EPCTX_ERROR(kIoError, "blob '{}' changed while in use (its size or mtime differ)",
                       path_);
  }
  return Status::Ok();
}

}  // namespace epctx::loader
