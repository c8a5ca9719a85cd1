// Packing a weight into the layout a oneDNN primitive reads, done once by the compiler; the
// bytes go into the blob and the kernel uses them in place.
#pragma once

#include <cstdint>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/kernels/onednn/conv_primitive.h"
#include "exec/kernels/onednn/matmul_primitive.h"

namespace epctx::exec::kernels::onednn {

struct PackedWeight {
  Tensor bytes;  // float32 (int8 for integer problems, bfloat16 for bf16 ones) [n]: the layout
  std::vector<int64_t> format;  // EncodeWeightFormat of its layout
  std::string implementation;   // the oneDNN implementation it was packed for
  // CPU features (util/cpu_features.h) the kernel needs to compute exactly with these bytes,
  // beyond the tier's: Int8WeightCpuFeatures for int8 weights, Bf16WeightCpuFeatures for
  // bfloat16 ones.
  uint64_t required_cpu_features = 0;
};

// What a Pack*Weights call makes, known without packing: the layout oneDNN's primitive reads and
// its size. The compiler records it while its passes run and packs each weight only when the blob
// is written, so that the packed weights of a model are never all in memory at once.
struct PackedWeightPlan {
  std::vector<int64_t> format;  // EncodeWeightFormat of the layout
  std::string implementation;
  DataType dtype = DataType::kFloat32;  // int8 for integer problems, bfloat16 for bf16 ones
  int64_t elements = 0;                 // the packed bytes are a Tensor [elements] of dtype
  uint64_t required_cpu_features = 0;   // as PackedWeight's, when known before packing
};

// The distance in floats between the rows of a plain [K, N] float32 weight that oneDNN's plain
// matmul (AVX2's gemm:jit) reads at full speed: N, or N + 16 when a row is a multiple of 1 KiB
// (cache-set aliasing; weight_packing.cc says how much it cost).
int64_t AliasFreeRowStride(int64_t n);

// With `format`, the implementation that reads that layout (ConvPrimitiveDescReading): the
// compiler's portable Winograd layout.
Result<PackedWeightPlan> PlanConvWeights(const ConvGeometry& g, const ConvConfig& c,
                                         std::span<const int64_t> format = {});
Result<PackedWeightPlan> PlanMatMulWeights(const MatMulGeometry& g, const MatMulConfig& c);

// `oihw`: ONNX's filter [M, C/group, k...] as float32 (rounded to bfloat16 with c.bf16). The
// geometry is the one the kernel will see (for dynamic shapes, a representative one).
Result<PackedWeight> PackConvWeights(const ConvGeometry& g, const ConvConfig& c, const float* oihw,
                                     std::span<const int64_t> format = {});

// `b`: the weight as float32 [K, N], or [N, K] when `transposed` (Gemm's transB); `alpha`
// scales it (Gemm's alpha). With c.bf16 it is rounded to bfloat16.
Result<PackedWeight> PackMatMulWeights(const MatMulGeometry& g, const MatMulConfig& c,
                                       const float* b, bool transposed, float alpha);

// A float16 model's matmul weight [k, n], whose float32 values are all float16 values, stored as
// float16 in the 64-column blocked layout our kernels read (blocked_gemv.h's kFloat16Blocked:
// half the bytes of a decode step's weight stream): the layout `plan` (float32) has where oneDNN
// packs it so (AVX-512), the same layout in place of oneDNN's plain one (AVX2). kUnsupported when
// this build cannot read it (the weight then stays float32).
Result<PackedWeightPlan> Float16FormOf(const PackedWeightPlan& plan, int64_t k, int64_t n);

// `b` [k, n] (plain float32, every value a float16 value) packed as `half` (Float16FormOf's
// plan) says; kInternal when a value is not a float16 value.
Result<PackedWeight> PackFloat16MatMulWeights(const PackedWeightPlan& half, int64_t k, int64_t n,
                                              const float* b);

// `packed` (float32 in a layout Float16FormOf accepts) in its float16 form; kInternal when a
// value is not a float16 value.
Result<PackedWeight> NarrowToFloat16(PackedWeight packed);

// `oihw`: an int8 filter [M, C/group, k...], for a convolution with c.integer set. Weights that
// oneDNN's int8 kernels here would not multiply exactly (Int8ProductsExact) are refused
// (kUnsupported): the compiler keeps such products on its exact kernels.
Result<PackedWeight> PackIntegerConvWeights(const ConvGeometry& g, const ConvConfig& c,
                                            const int8_t* oihw);

// `b`: MatMulInteger's int8 weight [K, N], for a matmul with c.integer set; refused as above.
Result<PackedWeight> PackIntegerMatMulWeights(const MatMulGeometry& g, const MatMulConfig& c,
                                              const int8_t* b);

}  // namespace epctx::exec::kernels::onednn
