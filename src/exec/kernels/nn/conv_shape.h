// The problem of a convolution on concrete shapes, x [N, C, in...] and w [M, C/group, kernel...],
// checked and resolved once for every kernel that computes one (our float32 and integer
// convolutions, oneDNN's, and the compiler packing weights for oneDNN's).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "epctx/status.h"
#include "exec/kernels/nn/window.h"

namespace epctx::exec::kernels {

struct ConvShape {
  int64_t batch = 0;
  int64_t in_channels = 0;   // C
  int64_t out_channels = 0;  // M
  int64_t group = 1;
  Window3d window;

  int64_t in_per_group() const { return in_channels / group; }
  int64_t out_per_group() const { return out_channels / group; }
  int64_t patch_size() const { return in_per_group() * window.kernel_size(); }  // GEMM K
  std::vector<int64_t> output_shape() const;  // [N, M, out spatial...]
};

// Checks x's dims against w's (ranks 3 to 5 and equal, C = w[1] * group, M a multiple of group,
// kernel dims >= 1 and equal to kernel_shape when given) and resolves the window; the errors name
// the inputs X and W.
Result<ConvShape> ResolveConvShape(const WindowAttrs& window, int64_t group,
                                   std::span<const int64_t> x_dims,
                                   std::span<const int64_t> w_dims);

}  // namespace epctx::exec::kernels
