// Row-major float32 matrix products on Eigen's GEMM, used by Conv, Gemm and MatMul. Operands are
// used where they lie (weights in a mapped blob included): nothing is copied or repacked here.
#pragma once

#include <algorithm>
#include <cstdint>

#include "exec/kernels/common/parallel_for.h"

namespace epctx::exec::kernels {

// A row-major matrix; `transposed` means the logical operand is the transpose of what is stored.
struct GemmOperand {
  const float* data = nullptr;
  int64_t ld = 0;  // elements between consecutive stored rows
  bool transposed = false;
};

// c[m,n] = alpha * op(a)[m,k] * op(b)[k,n] on the calling thread.
void GemmF32(int64_t m, int64_t n, int64_t k, float alpha, GemmOperand a, GemmOperand b, float* c,
             int64_t ldc);

// The operand restricted to logical rows [begin, ...) (for A) or columns [begin, ...) (for B).
inline GemmOperand RowsFrom(GemmOperand a, int64_t begin) {
  a.data += a.transposed ? begin : begin * a.ld;
  return a;
}
inline GemmOperand ColsFrom(GemmOperand b, int64_t begin) {
  b.data += b.transposed ? begin * b.ld : begin;
  return b;
}

// Below this many multiply-adds a product is not worth splitting.
inline constexpr int64_t kMinParallelMacs = int64_t{1} << 18;

// GemmF32 with c split into blocks, along n when it is wide and along m otherwise, handed out
// to threads dynamically (a few per thread, so that others take over from a thread the OS
// deschedules); epilogue(row_begin, row_end, col_begin, col_end) runs on each block while it is
// in cache.
template <typename Epilogue>
void ParallelGemmF32(int64_t m, int64_t n, int64_t k, float alpha, GemmOperand a, GemmOperand b,
                     float* c, int64_t ldc, int threads, Epilogue&& epilogue) {
  constexpr int64_t kBlocksPerThread = 3;
  constexpr int64_t kMinBlock = 16;
  const bool split_n = n >= m;
  const int64_t extent = split_n ? n : m;
  const int64_t nt = m * n * k >= kMinParallelMacs ? std::max(threads, 1) : 1;
  const int64_t blocks =
      nt == 1 ? 1 : std::clamp<int64_t>(extent / kMinBlock, 1, kBlocksPerThread * nt);
  ParallelFor(static_cast<int>(nt), blocks, [&](int64_t block, int) {
    const int64_t begin = extent * block / blocks;
    const int64_t end = extent * (block + 1) / blocks;
    if (end == begin) return;
    if (split_n) {
      GemmF32(m, end - begin, k, alpha, a, ColsFrom(b, begin), c + begin, ldc);
      epilogue(int64_t{0}, m, begin, end);
    } else {
      GemmF32(end - begin, n, k, alpha, RowsFrom(a, begin), b, c + begin * ldc, ldc);
      epilogue(begin, end, int64_t{0}, n);
    }
  });
}

}  // namespace epctx::exec::kernels
