// A heap byte buffer with page alignment, used for blobs that live in memory instead of a file.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>

namespace epctx {

class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 4096;

  AlignedBuffer() = default;
  enum class Fill { kZero, kUninitialized };
  // Returns an invalid buffer if memory cannot be had. kUninitialized leaves pages untouched, so
  // they cost nothing until first written.
  explicit AlignedBuffer(size_t size, Fill fill = Fill::kZero) {
    size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
    if (rounded == 0) rounded = kAlignment;
    void* p = std::aligned_alloc(kAlignment, rounded);
    if (p == nullptr) return;
    if (fill == Fill::kZero) std::memset(p, 0, rounded);
    data_.reset(static_cast<std::byte*>(p));
    size_ = size;
  }

  bool valid() const { return data_ != nullptr; }
  std::byte* data() { return data_.get(); }
  const std::byte* data() const { return data_.get(); }
  size_t size() const { return size_; }
  std::span<const std::byte> bytes() const { return {data_.get(), size_}; }
  std::span<std::byte> mutable_bytes() { return {data_.get(), size_}; }

 private:
  struct FreeDeleter {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, FreeDeleter> data_;
  size_t size_ = 0;
};

}  // namespace epctx
