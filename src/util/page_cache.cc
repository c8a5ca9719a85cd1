#include "util/page_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "util/file.h"
#include "util/status_macros.h"

namespace epctx {

Status EvictFromPageCache(const std::string& path) {
  EPCTX_ASSIGN_OR_RETURN(UniqueFd fd, OpenReadOnly(path));
  if (::fsync(fd.get()) != 0) {
    return EPCTX_ERROR(kIoError, "'{}': fsync failed: {}", path, std::strerror(errno));
  }
  int err = ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  if (err != 0) {
    return EPCTX_ERROR(kIoError, "'{}': posix_fadvise(POSIX_FADV_DONTNEED) failed: {}", path,
                       std::strerror(err));
  }
  return Status::Ok();
}

Result<Residency> MappedRangeResidency(std::span<const std::byte> range) {
  if (range.empty()) return Residency{};
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(range.data()) / page * page;
  const size_t span =
      static_cast<size_t>(reinterpret_cast<uintptr_t>(range.data()) + range.size() - begin);
  std::vector<unsigned char> vec((span + page - 1) / page);
  if (::mincore(reinterpret_cast<void*>(begin), span, vec.data()) != 0) {
    return EPCTX_ERROR(kIoError, "mincore failed: {}", std::strerror(errno));
  }
  Residency r;
  r.total_pages = vec.size();
  for (unsigned char v : vec) r.resident_pages += v & 1;
  return r;
}

Result<Residency> PageCacheResidency(const std::string& path, uint64_t offset, uint64_t length) {
  EPCTX_ASSIGN_OR_RETURN(UniqueFd fd, OpenReadOnly(path));
  EPCTX_ASSIGN_OR_RETURN(MappedFile file, MappedFile::Map(fd, path));
  std::span<const std::byte> bytes = file.bytes();
  if (offset >= bytes.size()) return Residency{};
  const uint64_t length_in_file = std::min<uint64_t>(length, bytes.size() - offset);
  Result<Residency> r = MappedRangeResidency(bytes.subspan(offset, length_in_file));
  if (!r.ok()) return EPCTX_ERROR(kIoError, "'{}': {}", path, r.status().message());
  return r;
}

Result<Residency> SampledPageCacheResidency(const std::string& path, uint64_t samples) {
  EPCTX_ASSIGN_OR_RETURN(UniqueFd fd, OpenReadOnly(path));
  EPCTX_ASSIGN_OR_RETURN(MappedFile file, MappedFile::Map(fd, path));
  std::span<const std::byte> bytes = file.bytes();
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t pages = (bytes.size() + page - 1) / page;
  Residency r;
  r.total_pages = std::min(samples, pages);
  for (uint64_t i = 0; i < r.total_pages; ++i) {
    const uint64_t index = r.total_pages == 1 ? 0 : i * (pages - 1) / (r.total_pages - 1);
    unsigned char in_core = 0;
    if (::mincore(const_cast<std::byte*>(bytes.data() + index * page), page, &in_core) != 0) {
      return EPCTX_ERROR(kIoError, "'{}': mincore failed: {}", path, std::strerror(errno));
    }
    r.resident_pages += in_core & 1;
  }
  return r;
}

}  // namespace epctx
