// Byte-moving helpers of the indexing kernels, generic in the element size so that every
// fixed-size type (bool, int8, float16, double, ...) takes the same path; strings move as
// std::string elements through their own overload.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx::exec::kernels {

// Copies a box of `dims` elements from `src` to `dst`, each side addressed by its own element
// strides per dim (0 repeats an element, negative walks backwards). Dims that are contiguous on
// both sides are merged, so a box of whole rows becomes a few memcpy calls.
void CopyStrided(std::span<const int64_t> dims, const std::byte* src,
                 std::span<const int64_t> src_strides, std::byte* dst,
                 std::span<const int64_t> dst_strides, size_t element, int threads);

void CopyStrided(std::span<const int64_t> dims, const std::string* src,
                 std::span<const int64_t> src_strides, std::string* dst,
                 std::span<const int64_t> dst_strides, int threads);

// The copy for tensors of one type: strings or any fixed-size type (the caller has checked it),
// `src_offset` elements into `src`.
void CopyStridedTensor(std::span<const int64_t> dims, const Tensor& src, int64_t src_offset,
                       std::span<const int64_t> src_strides, Tensor& dst,
                       std::span<const int64_t> dst_strides, int threads);

// Row-major element strides of `shape`; an error when one overflows int64 (as an empty tensor's
// may: [0, 2^32, 2^32]).
Result<std::vector<int64_t>> ContiguousStrides(std::span<const int64_t> shape);

// Writes `count` copies of the `element`-byte value at `value` to `dst`.
void FillElements(std::byte* dst, int64_t count, const std::byte* value, size_t element);

}  // namespace epctx::exec::kernels
