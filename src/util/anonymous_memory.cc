#include "util/anonymous_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "util/status_macros.h"

namespace epctx {

Result<AnonymousMemory> AnonymousMemory::Allocate(size_t size, size_t alignment, bool huge_pages) {
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  if (alignment < page || (alignment & (alignment - 1)) != 0) {
    return EPCTX_ERROR(kInvalidArgument, "alignment {} is not a power of two >= the page size {}",
                       alignment, page);
  }
  if (size == 0) size = 1;
  if (size > SIZE_MAX / 2 - alignment) {
    return EPCTX_ERROR(kInvalidArgument, "{} bytes of memory asked for", size);
  }
  size_t capacity = (size + alignment - 1) / alignment * alignment;
  // Over-allocate by one alignment unit, then unmap the unaligned head and the tail.
  size_t reserve = capacity + alignment;
  void* raw = ::mmap(nullptr, reserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    return EPCTX_ERROR(kIoError, "mmap of {} bytes of anonymous memory failed: {}", reserve,
                       std::strerror(errno));
  }
  uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = (start + alignment - 1) / alignment * alignment;
  if (aligned > start) ::munmap(raw, aligned - start);
  uintptr_t end = start + reserve;
  if (end > aligned + capacity) {
    ::munmap(reinterpret_cast<void*>(aligned + capacity), end - (aligned + capacity));
  }
  AnonymousMemory memory;
  memory.data_ = reinterpret_cast<std::byte*>(aligned);
  memory.capacity_ = capacity;
  if (huge_pages) {
    // Refused where THP is compiled out or set to "never"; the memory still works.
    (void)::madvise(memory.data_, capacity, MADV_HUGEPAGE);
  }
  return memory;
}

AnonymousMemory::~AnonymousMemory() {
  Release();
}

AnonymousMemory::AnonymousMemory(AnonymousMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

AnonymousMemory& AnonymousMemory::operator=(AnonymousMemory&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

void AnonymousMemory::Release() {
  if (data_ != nullptr) ::munmap(data_, capacity_);
  data_ = nullptr;
  capacity_ = 0;
}

bool AnonymousMemory::MapAheadForWriting(const std::atomic<bool>& stop) {
  for (size_t at = 0; at < capacity_; at += kHugePageSize) {
    if (stop.load(std::memory_order_relaxed)) return false;
    const size_t n = std::min(kHugePageSize, capacity_ - at);
    if (::madvise(data_ + at, n, MADV_POPULATE_WRITE) != 0) return false;
  }
  return true;
}

Status AnonymousMemory::MakeReadOnly() {
  if (data_ != nullptr && ::mprotect(data_, capacity_, PROT_READ) != 0) {
    return EPCTX_ERROR(kIoError, "mprotect(PROT_READ) of {} bytes failed: {}", capacity_,
                       std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace epctx
