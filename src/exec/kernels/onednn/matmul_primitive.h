// The product of an activation [..., M, K] with a constant weight [K, N] (MatMul, Gemm, the
// Linear layers of transformers) on oneDNN, as a 2-D matmul over the flattened rows: the
// problem of a DnnlMatMul node, and its primitive descriptor.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "epctx/status.h"
#include "exec/kernels/onednn/dnnl.h"
#include "exec/kernels/onednn/post_ops.h"

namespace epctx::exec::kernels::onednn {

struct MatMulGeometry {
  int64_t m = 0;  // rows: the product of the activation's leading dims
  int64_t k = 0;
  int64_t n = 0;
};

struct MatMulConfig {
  bool has_bias = false;
  std::vector<PostOp> post_ops;
  // uint8 activations times int8 weights into int32 (MatMulInteger); no bias or post-ops then.
  bool integer = false;
  // Source and weights in bfloat16 (compute_type.h); output, bias and residual stay float32.
  bool bf16 = false;
};

// `weights`: the layout the primitive must read, or null to let oneDNN choose.
Result<dnnl::matmul::primitive_desc> MakeMatMulPrimitiveDesc(const MatMulGeometry& g,
                                                             const MatMulConfig& c,
                                                             const dnnl::memory::desc* weights);

std::string MatMulKey(const MatMulGeometry& g, const MatMulConfig& c, int threads);

}  // namespace epctx::exec::kernels::onednn
