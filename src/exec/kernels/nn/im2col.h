// im2col for the convolutions computed as GEMMs (float32, and the integer ones on widened int32
// values): lays out the input patches of one group as the right-hand GEMM operand [K, P],
// K = C/group * kernel taps (in W's OIHW order), P = output positions.
#pragma once

#include <cstdint>

#include "exec/kernels/nn/window.h"

namespace epctx::exec::kernels {

// Rows [k_begin, k_end) and columns [p_begin, p_end) of the im2col matrix of `x` (one group's
// channels, [C/group, D, H, W]): col[(k - k_begin) * ld + (p - p_begin)] is the input element
// that tap k sees from output position p, or 0 in the padding.
// Defined for float and int32_t.
template <typename T>
void Im2Col(const T* x, const Window3d& w, int64_t k_begin, int64_t k_end, int64_t p_begin,
            int64_t p_end, T* col, int64_t ld);

}  // namespace epctx::exec::kernels
