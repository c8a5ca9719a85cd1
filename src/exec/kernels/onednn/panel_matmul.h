// A matmul by a constant float32 weight run as a 1x1 convolution, on CPUs where oneDNN 2.6 has
// no matmul of its own but its GEMM (AVX2): the activation rows [M, K] are an nhwc image of M x 1
// pixels of K channels, the weight [K, N] a filter of N outputs, stored in the convolution's
// "OIhw8i8o" layout: panels of 8 columns, each [K padded to 8][8] ("panels" below; blocked_gemv.h
// reads them for one row). On a Zen 3 core oneDNN's jit_1x1:avx2 ran 128-row products ~20%
// faster than gemm:jit over the same weight in plain rows at 2 threads ([768, 3072] 4.64 -> 3.70
// ms, SmolLM's [576, 49152] lm_head 54.5 -> 42.6) and up to 23% at 1 thread, and it makes its code
// per shape in 0.2-0.9 ms, where the GEMM makes 17-27 ms of code at the process's first product.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/kernels/onednn/dnnl.h"
#include "exec/kernels/onednn/matmul_primitive.h"
#include "exec/kernels/onednn/primitive_memo.h"

namespace epctx::exec::kernels::onednn {

// Columns of a panel, and rows K is padded to (the convolution's 8i8o blocks).
inline constexpr int64_t kPanelColumns = 8;
inline constexpr int64_t PaddedToPanel(int64_t v) {
  return (v + kPanelColumns - 1) / kPanelColumns * kPanelColumns;
}

// The panels of a [k, n] float32 weight as a 2-D matmul-weight descriptor (oneDNN has no tag for
// it: "BA8a8b"): the layout a blob records for such a weight.
dnnl::memory::desc PanelWeightDesc(int64_t k, int64_t n);

// The convolution computing A [g.m, g.k] times W [g.k, g.n] (+ bias, post-ops) into [g.m, g.n];
// the weight in panels, or in the layout oneDNN chooses when `panels` is false. Float32 only
// (kInvalidArgument for an integer or bfloat16 config).
Result<dnnl::convolution_forward::primitive_desc> MakePanelMatMulPrimitiveDesc(
    const MatMulGeometry& g, const MatMulConfig& c, bool panels);

// Whether the compiler stores this problem's weight in panels: oneDNN's matmul here would read
// plain rows (`matmul_reads_plain_rows`, the AVX2 tiers), the problem is float32, padding K and
// N to 8 adds at most a quarter to the weight, and the convolution oneDNN makes for it reads
// panels.
bool TakesPanelMatMul(const MatMulGeometry& g, const MatMulConfig& c, bool matmul_reads_plain_rows);

// The convolutions of one DnnlMatMul node whose weight is in panels: per shape of A and thread
// count, made on first use (or in Prepare) and remembered.
class PanelMatMul {
 public:
  PanelMatMul(int64_t k, int64_t n, MatMulConfig config)
      : k_(k), n_(n), config_(std::move(config)) {}

  // y [m, n] = a [m, k] x w (+ b) with the post-ops the primitive applies (r: the residual).
  Status Run(const Tensor& a, const Tensor& w, const Tensor* b, const Tensor* r,
             const MatMulGeometry& g, Tensor& y, int threads);
  // Makes the convolution for A of shape `a_shape` (geometry g) before its first run.
  void Prepare(const std::vector<int64_t>& a_shape, const MatMulGeometry& g, int threads) {
    (void)PrimitiveFor(a_shape, g, threads);
  }
  std::string_view implementation() const { return memo_.implementation(); }

 private:
  Result<std::shared_ptr<const CachedPrimitive>> PrimitiveFor(const std::vector<int64_t>& a_shape,
                                                              const MatMulGeometry& g, int threads);

  int64_t k_ = 0;
  int64_t n_ = 0;
  MatMulConfig config_;
  PrimitiveMemo memo_;
};

}  // namespace epctx::exec::kernels::onednn
