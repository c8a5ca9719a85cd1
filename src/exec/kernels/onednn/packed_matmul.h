// The oneDNN matmul of a kernel whose weight the compiler packed (DnnlMatMul, DnnlMatMulInteger):
// for each shape of A and thread count, the primitive that reads the weight in its stored layout
// (`weights_format`), from the process-wide cache, remembered for the kernel's next run.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "epctx/status.h"
#include "exec/attributes.h"
#include "exec/kernels/onednn/matmul_primitive.h"
#include "exec/kernels/onednn/primitive_cache.h"
#include "exec/kernels/onednn/primitive_memo.h"

namespace epctx::exec::kernels::onednn {

class PackedWeightMatMul {
 public:
  // Reads the node's weights_shape (the ONNX [K, N] of the weight) and weights_format (the
  // packed layout); kInvalidArgument when either is missing or malformed.
  Status Init(const Attributes& attrs, const MatMulConfig& config);

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  // The packed layout, encoded (weight_format.h).
  std::span<const int64_t> format() const { return format_; }
  // The product's geometry for A of shape `a_shape` ([..., K]); kInvalidArgument naming A's shape
  // otherwise.
  Result<MatMulGeometry> GeometryFor(const std::vector<int64_t>& a_shape) const;
  // The output's shape for A of shape `a_shape`: [..., N].
  std::vector<int64_t> OutputShape(const std::vector<int64_t>& a_shape) const;
  // Kernel::Prepare of both kernels: makes the primitive for A's known shape (shapes[0]).
  void Prepare(std::span<const std::vector<int64_t>* const> shapes, int threads);

  // The primitive for A of shape `a_shape` (rows flattened into g.m) on `threads` threads: the
  // one this kernel used last for them, or the process's, made on first use. A shape other than
  // the one packed for (or another CPU tier) gets a primitive that reads the stored layout; a
  // bf16 matmul converts its float32 source before each run (compute_type.h).
  Result<std::shared_ptr<const CachedPrimitive>> PrimitiveFor(const std::vector<int64_t>& a_shape,
                                                              const MatMulGeometry& g, int threads);

  const MatMulConfig& config() const { return config_; }
  std::string_view implementation() const { return memo_.implementation(); }

 private:
  Result<CachedPrimitive> Make(const MatMulGeometry& g, int threads) const;

  MatMulConfig config_;
  int64_t k_ = 0;
  int64_t n_ = 0;
  std::vector<int64_t> format_;
  uint64_t format_hash_ = 0;
  PrimitiveMemo memo_;
};

}  // namespace epctx::exec::kernels::onednn
