// RAII for anonymous private memory from mmap: aligned (for huge pages), optionally advised for
// transparent huge pages, and able to become read-only once filled.
#pragma once

#include <atomic>
#include <cstddef>
#include <span>

#include "epctx/status.h"

namespace epctx {

class AnonymousMemory {
 public:
  static constexpr size_t kHugePageSize = size_t{2} << 20;

  // At least `size` bytes (rounded up to a multiple of `alignment`, a power of two no smaller than
  // the page size), starting at an `alignment`-aligned address. Pages cost nothing until touched.
  // With `huge_pages`, madvise(MADV_HUGEPAGE) is asked for; refusal is not an error.
  static Result<AnonymousMemory> Allocate(size_t size, size_t alignment, bool huge_pages);

  AnonymousMemory() = default;
  ~AnonymousMemory();
  AnonymousMemory(AnonymousMemory&& other) noexcept;
  AnonymousMemory& operator=(AnonymousMemory&& other) noexcept;
  AnonymousMemory(const AnonymousMemory&) = delete;
  AnonymousMemory& operator=(const AnonymousMemory&) = delete;

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  size_t capacity() const { return capacity_; }  // the rounded size
  std::span<std::byte> mutable_bytes() { return {data_, capacity_}; }

  // Faults every page in for writing (madvise(MADV_POPULATE_WRITE), Linux 5.14), 2 MiB per call,
  // so that the code that later writes the memory finds it mapped: pages present already keep
  // their contents, so another thread may be using the memory meanwhile. Stops between calls once
  // `stop` is set. Returns whether every page was mapped (false on older kernels, which do
  // nothing).
  bool MapAheadForWriting(const std::atomic<bool>& stop);

  // mprotect(PROT_READ): later writes fault instead of corrupting the contents.
  Status MakeReadOnly();

 private:
  void Release();
  std::byte* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace epctx
