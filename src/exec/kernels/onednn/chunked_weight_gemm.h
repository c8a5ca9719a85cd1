// Rows of an activation (a prompt) times a weight the blob does not hold in float32: float16
// weights in the blocked layout (blocked_gemv.h's kFloat16Blocked), or weight-only quantized
// ones (MatMulNBits). oneDNN has no matmul for either on CPUs without avx512_fp16 that keeps the
// arithmetic float32's, so the weight is made float32 a chunk of columns at a time, into the
// calling thread's buffer, and multiplied by oneDNN's float32 matmul while the chunk is still in
// the cache. Every chunk is one thread's, with the matmul on that thread. One row (a decode step)
// takes the kernels' own one-row paths instead.
#pragma once

#include <cstdint>
#include <functional>

#include "epctx/status.h"

namespace epctx::exec::kernels::onednn {

// The float32 form a chunk of weight columns is written in.
enum class ChunkLayout {
  kBlocked,  // oneDNN's BA16a64b: blocks of 64 columns, K padded to a multiple of 16
  kColumns,  // column after column, each column's K weights contiguous (oneDNN's ba)
  kRows,     // row after row, each row's columns contiguous (oneDNN's ab: its AVX2 matmuls' own)
};

// Writes the float32 weights of columns [first, first + count) into `out`, in the chunk's
// layout (kBlocked: whole column blocks, first a multiple of 64), `stride` floats from one row
// (kRows) or column (kColumns) to the next; kBlocked's is 0 (its blocks are dense). Called from
// several threads at once, each with its own `out`.
using FillChunk = std::function<void(int64_t first, int64_t count, int64_t stride, float* out)>;

// y [m, n] = a [m, k] times W [k, n], W made a chunk at a time by `fill`, on up to `threads`
// threads; no bias.
Status ChunkedWeightGemm(int64_t m, int64_t k, int64_t n, ChunkLayout layout, const FillChunk& fill,
                         const float* a, float* y, int threads);

// The float16 case: w in the kFloat16Blocked layout, widened to float32 exactly, into oneDNN's
// blocked layout where its matmuls read it (AVX-512), into rows elsewhere.
Status HalfWeightGemm(const uint16_t* w, int64_t m, int64_t k, int64_t n, const float* a, float* y,
                      int threads);

}  // namespace epctx::exec::kernels::onednn
