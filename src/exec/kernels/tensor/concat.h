// Concatenation along an axis, shared by Concat and ConcatFromSequence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/kernel.h"

namespace epctx::exec::kernels {

// Output `output` = `inputs` (one type, equal dims outside the axis; fixed-size types or strings)
// joined along `axis` (negative from the end); errors name the input at fault.
Status ConcatToOutput(KernelContext& ctx, size_t output, const std::vector<const Tensor*>& inputs,
                      int64_t axis);

}  // namespace epctx::exec::kernels
