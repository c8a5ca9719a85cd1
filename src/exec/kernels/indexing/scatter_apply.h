// The write step shared by ScatterElements and ScatterND: update slabs land at element offsets
// of the output, replacing or combining with what is there (reduction, opset 16/18).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/kernel.h"

namespace epctx::exec::kernels {

// Output `index` allocated with data's type and shape and holding a copy of it.
Result<Tensor*> AllocateCopyOf(KernelContext& ctx, size_t index, const Tensor& data);

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

// "none", "add", "mul", "max", "min"; kUnsupported otherwise.
Result<ScatterReduction> ParseScatterReduction(std::string_view name);

// For each i, the `slab` elements of `updates` starting at i * slab go to `out` at element
// offset offsets[i], in order (later duplicates win for kNone, combine otherwise).
Status ScatterSlabs(ScatterReduction reduction, DataType type, std::byte* out,
                    std::span<const int64_t> offsets, const std::byte* updates, int64_t slab);

}  // namespace epctx::exec::kernels
