// Shape arithmetic and input checks shared by every kernel family.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/kernel.h"
#include "util/overflow.h"

namespace epctx::exec::kernels {

// Product of dims [begin, end) of `dims`, for every product of dims that becomes a dim, an element
// count or a loop bound: an error naming the dims when it overflows int64, never a wrapped value.
// Parts of an existing tensor's dims need the check too: [0, 2^32, 2^32] holds no element, but
// its last two dims multiply to 2^64. (The product of all of a tensor's dims is its
// element_count(), checked when it was made.)
using ::epctx::CheckedDimProduct;  // all of `dims` (util/overflow.h)
inline Result<int64_t> CheckedDimProduct(const std::vector<int64_t>& dims, size_t begin,
                                         size_t end) {
  return CheckedDimProduct(std::span<const int64_t>(dims.data() + begin, end - begin));
}

// `axis` in [-rank, rank) mapped to [0, rank).
Result<int64_t> NormalizeAxis(int64_t axis, int64_t rank, std::string_view what);

// Input `index`, or kInvalidArgument naming `name` when it is omitted.
Result<const Tensor*> RequiredInput(const KernelContext& ctx, size_t index, std::string_view name);
bool InputPresent(const NodeInfo& node, size_t index);
bool OutputPresent(const NodeInfo& node, size_t index);

Status ExpectDtype(const Tensor& t, DataType want, std::string_view name);
Status ExpectRank(const Tensor& t, size_t rank, std::string_view name);
// The same checks at creation, against what the compiler knows; they pass when it knows nothing.
Status ExpectStaticDtype(const NodeInfo& node, size_t index, DataType want, std::string_view name);
Status ExpectStaticRank(const NodeInfo& node, size_t index, size_t rank, std::string_view name);

// The static shape of input `index` when the compiler knows its rank, else null. Unknown dims
// are -1.
const std::vector<int64_t>* StaticShape(const NodeInfo& node, size_t index);

// Elements of an int64 or int32 tensor of rank 0 or 1 (a shape, axes or bounds input).
Result<std::vector<int64_t>> ReadIndexVector(const Tensor& t, std::string_view name);

// Element size of a type a data-movement kernel can copy, or kUnsupported.
Result<size_t> CopyableElementSize(DataType type, std::string_view name);
// The same check for kernels that also move strings (as std::string elements).
Status ExpectMovable(DataType type, std::string_view name);

}  // namespace epctx::exec::kernels
