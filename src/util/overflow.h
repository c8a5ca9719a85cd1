// Arithmetic that reports overflow instead of wrapping, for sizes computed from untrusted input.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
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

// The exact product of non-negative `dims` into *out; false when it exceeds int64. Exact: a 0
// anywhere makes it 0 however large the other dims are, so the order of the dims does not matter.
inline bool ExactDimProduct(std::span<const int64_t> dims, int64_t* out) {
  *out = 0;
  for (int64_t d : dims) {
    if (d == 0) return true;
  }
  int64_t product = 1;
  for (int64_t d : dims) {
    if (__builtin_mul_overflow(product, d, &product)) return false;
  }
  *out = product;
  return true;
}

// Product of dims that becomes a dim or an element count (Flatten's output dims, the rows of a
// reduction, the batches of a matrix product); kInvalidArgument on a negative dim or when the
// product overflows int64. Even an existing tensor's dims need it: [0, 2^32, 2^32] holds no
// element, but its last two dims multiply to 2^64, which int64 arithmetic would wrap to 0.
inline Result<int64_t> CheckedDimProduct(std::span<const int64_t> dims) {
  for (int64_t d : dims) {
    if (d < 0) return EPCTX_ERROR(kInvalidArgument, "negative dimension {}", d);
  }
  int64_t product = 0;
  if (!ExactDimProduct(dims, &product)) {
    return EPCTX_ERROR(kInvalidArgument, "the product of dims {} overflows int64",
                       ShapeToString(std::vector<int64_t>(dims.begin(), dims.end())));
  }
  return product;
}

// Product of dims; fails on a negative dim or when the product overflows int64.
inline Result<int64_t> CheckedElementCount(std::span<const int64_t> shape) {
  for (int64_t d : shape) {
    if (d < 0) return EPCTX_ERROR(kInvalidArgument, "negative dimension {}", d);
  }
  int64_t count = 0;
  if (!ExactDimProduct(shape, &count)) {
    return EPCTX_ERROR(kInvalidArgument, "element count overflows");
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
