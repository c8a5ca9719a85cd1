// Index tensors of the gather/scatter family: int32 or int64, negative values counting back
// from the end of their axis. Everything is checked before any data moves.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/kernel.h"

namespace epctx::exec::kernels {

// The elements of an int32 or int64 tensor of any rank.
Result<std::vector<int64_t>> ReadIndexTensor(const Tensor& t, std::string_view name);

// Maps `index` in [-extent, extent) to [0, extent); kInvalidArgument otherwise.
Status NormalizeIndex(int64_t& index, int64_t extent, std::string_view name);

// Shapes of equal rank where every dim of `inner` except `axis` fits in `outer`.
Status ExpectFitsExcept(std::span<const int64_t> inner, std::string_view inner_name,
                        std::span<const int64_t> outer, std::string_view outer_name, size_t axis);

// At creation: kUnsupported when input `index` is known to have a type without a fixed element
// size (string), which no indexing kernel can move.
Status ExpectStaticCopyable(const NodeInfo& node, size_t index, std::string_view name);
// The same for kernels that also move strings.
Status ExpectStaticMovable(const NodeInfo& node, size_t index, std::string_view name);

}  // namespace epctx::exec::kernels
