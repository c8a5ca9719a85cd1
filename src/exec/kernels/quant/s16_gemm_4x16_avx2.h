// The integer GEMM of the 8-bit kernels of our own (MatMulInteger, ConvInteger, QLinearMatMul,
// QLinearConv) on AVX2: their operands are 8-bit values minus zero points, within [-255, 255], so
// int16 holds them and vpmaddwd adds each pair of products into int32 exactly (unlike
// vpmaddubsw, whose int16 pair sums saturate), at about the rate of oneDNN's int8 kernels without
// VNNI. Tiles of 4 rows by 16 columns.
#pragma once

#include <cstdint>

namespace epctx::exec::kernels {

#ifdef __AVX2__
// c [m, n] = a [m, k] x b [k, n], row-major, every value of a and b within [-255, 255] (held in
// int32); exact. `threads` split the columns.
void s16_gemm_4x16_avx2(int64_t m, int64_t n, int64_t k, const int32_t* a, const int32_t* b,
                        int32_t* c, int threads);
#endif

}  // namespace epctx::exec::kernels
