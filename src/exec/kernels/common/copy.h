// Kernels that only change how a tensor is viewed (Identity, Reshape, Flatten, Squeeze, ...)
// still write a fresh output: outputs never alias inputs.
#pragma once

#include <cstdint>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/kernel.h"

namespace epctx::exec::kernels {

// Allocates output `index` with `shape` (same element count as `in`) and copies `in` into it.
Status CopyToOutput(KernelContext& ctx, size_t index, const Tensor& in, std::vector<int64_t> shape);

}  // namespace epctx::exec::kernels
