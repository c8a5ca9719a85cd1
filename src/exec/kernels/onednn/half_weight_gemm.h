// Rows of an activation times a float16 weight in the blocked layout (blocked_gemv.h's
// kFloat16Blocked) when there is more than one row (a prompt): oneDNN has no float16 matmul on
// CPUs without avx512_fp16, but the layout is float32's with half the bytes per element, so a
// chunk of column blocks widened to float32 (exactly) is a float32 weight oneDNN's matmul reads
// as it is. Chunks are widened one at a time into the calling thread's buffer and multiplied
// while their float32 bytes are still in the cache. One row takes BlockedGemv instead.
#pragma once

#include <cstdint>

#include "epctx/status.h"

namespace epctx::exec::kernels::onednn {

// y [m, n] = a [m, k] times W [k, n], on up to `threads` threads; no bias.
Status HalfWeightGemm(const uint16_t* w, int64_t m, int64_t k, int64_t n, const float* a, float* y,
                      int threads);

}  // namespace epctx::exec::kernels::onednn
