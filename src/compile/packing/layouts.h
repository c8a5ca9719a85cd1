// Packing layout ids: how a weight's bytes are arranged for the kernel that consumes it. The id
// is part of a weight's content hash, so equal values in different layouts are stored apart.
// Changing what an id means requires bumping format::kPackLayoutVersion.
#pragma once

#include <cstdint>

namespace epctx::compile {

enum class PackLayout : uint32_t {
  kPlain = 0,            // ONNX's own layout, row-major
  kConvFilterOihw = 1,   // Conv filter [M, C/group, kH, kW] = row-major [M, C/group*kH*kW] GEMM
                         // operand per group, with any BatchNormalization folded in
  kGemmBTransposed = 2,  // Gemm B as [N, K] (transB=1), alpha folded in
  kOneDnn = 3,           // the layout a oneDNN primitive reads; the node's `weights_format`
                         // attribute describes it (exec/kernels/onednn/weight_format.h)
  kNBitsCodes = 4,       // MatMulNBits codes as exec/kernels/quant/nbits_layout.h packs them
};

}  // namespace epctx::compile
