// Arithmetic that reports overflow instead of wrapping, for sizes computed from untrusted input.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "epctx/status.h"
#include "util/status_macros.h"

namespace epctx {

inline bool CheckedMul(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}
inline bool CheckedAdd(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

// `size` bytes at `offset` lie inside [0, total). Written so that it cannot wrap.
inline bool RangeInside(uint64_t offset, uint64_t size, uint64_t total) {
  return size <= total && offset <= total - size;
}

// Product of dims; fails on a negative dim or when the product overflows int64.
inline Result<int64_t> CheckedElementCount(std::span<const int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) return EPCTX_ERROR(kInvalidArgument, "negative dimension {}", d);
    if (__builtin_mul_overflow(count, d, &count)) {
      return EPCTX_ERROR(kInvalidArgument, "element count overflows");
    }
  }
  return count;
}
inline Result<int64_t> CheckedElementCount(const std::vector<int64_t>& shape) {
  return CheckedElementCount(std::span<const int64_t>(shape));
}

// Bytes of the elements of `shape`, `element_size` bytes each; false when the count or the bytes
// overflow, or the bytes exceed int64 (tensor sizes and file offsets are signed).
inline bool CheckedByteSize(std::span<const int64_t> shape, uint64_t element_size,
                            uint64_t* bytes) {
  auto count = CheckedElementCount(shape);
  return count.ok() && CheckedMul(static_cast<uint64_t>(*count), element_size, bytes) &&
         *bytes <= static_cast<uint64_t>(INT64_MAX);
}

}  // namespace epctx
