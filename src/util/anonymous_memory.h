// RAII for anonymous private memory from mmap: aligned (for huge pages), optionally advised for
// transparent huge pages, and able to become read-only once filled.
#pragma once

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

  // mprotect(PROT_READ): later writes fault instead of corrupting the contents.
  Status MakeReadOnly();

 private:
  void Release();
  std::byte* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace epctx
