// Copying a tensor into an output, and outputs that only change how an input is viewed
// (Identity, Reshape, Flatten, Squeeze, ...): those share the input's memory when the executor
// allows it and copy otherwise.
#pragma once

#include <cstdint>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/kernel.h"

namespace epctx::exec::kernels {

// Allocates output `index` with `shape` (same element count as `in`) and copies `in` into it.
Status CopyToOutput(KernelContext& ctx, size_t index, const Tensor& in, std::vector<int64_t> shape);

// Output `index` is input `input` (`in`) seen with `shape`: shared when the executor allows it
// (KernelContext::ShareInput), copied otherwise.
Status ViewOrCopy(KernelContext& ctx, size_t index, size_t input, const Tensor& in,
                  std::vector<int64_t> shape);

// Copies indices [begin, begin + size) of axis `axis` of `in` into `out`, whose shape is `in`'s
// with that axis `size` long (the caller allocates it). Strings are copied as strings. Fails when
// a product of `in`'s dims overflows int64 (an empty `in` may have such dims).
Status CopyAxisRange(const Tensor& in, size_t axis, int64_t begin, int64_t size, Tensor& out);

}  // namespace epctx::exec::kernels
