// Packing a weight into the layout a oneDNN primitive reads, done once by the compiler; the
// bytes go into the blob and the kernel uses them in place.
#pragma once

#include <cstdint>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/kernels/dnnl/conv_primitive.h"
#include "exec/kernels/dnnl/matmul_primitive.h"

namespace epctx::exec::kernels::onednn {

struct PackedWeight {
  Tensor bytes;                 // float32 (int8 for integer matmuls) [n]: the packed layout
  std::vector<int64_t> format;  // EncodeWeightFormat of its layout
  std::string implementation;   // the oneDNN implementation it was packed for
};

// `oihw`: ONNX's filter [M, C/group, k...] as float32. The geometry is the one the kernel will
// see (for dynamic shapes, a representative one).
Result<PackedWeight> PackConvWeights(const ConvGeometry& g, const ConvConfig& c, const float* oihw);

// `b`: the weight as float32 [K, N], or [N, K] when `transposed` (Gemm's transB); `alpha`
// scales it (Gemm's alpha).
Result<PackedWeight> PackMatMulWeights(const MatMulGeometry& g, const MatMulConfig& c,
                                       const float* b, bool transposed, float alpha);

// `oihw`: an int8 filter [M, C/group, k...], for a convolution with c.integer set.
Result<PackedWeight> PackIntegerConvWeights(const ConvGeometry& g, const ConvConfig& c,
                                            const int8_t* oihw);

// `b`: MatMulInteger's int8 weight [K, N], for a matmul with c.integer set.
Result<PackedWeight> PackIntegerMatMulWeights(const MatMulGeometry& g, const MatMulConfig& c,
                                              const int8_t* b);

}  // namespace epctx::exec::kernels::onednn
