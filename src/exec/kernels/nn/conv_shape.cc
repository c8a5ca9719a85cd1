#include "exec/kernels/nn/conv_shape.h"

#include <algorithm>

#include "epctx/tensor.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {

std::vector<int64_t> ConvShape::output_shape() const {
  std::vector<int64_t> shape{batch, out_channels};
  shape.insert(shape.end(), window.out_spatial.begin(), window.out_spatial.end());
  return shape;
}

Result<ConvShape> ResolveConvShape(const WindowAttrs& window, int64_t group,
                                   std::span<const int64_t> xs, std::span<const int64_t> ws) {
  if (ws.size() < 3 || ws.size() > 5) {
    return EPCTX_ERROR(kInvalidArgument, "input W has rank {}, expected 3 to 5", ws.size());
  }
  if (xs.size() != ws.size()) {
    return EPCTX_ERROR(kInvalidArgument, "input X has rank {}, expected {} (the rank of W)",
                       xs.size(), ws.size());
  }
  if (group < 1) return EPCTX_ERROR(kInvalidArgument, "group is {}, expected at least 1", group);
  ConvShape p;
  p.batch = xs[0];
  p.in_channels = xs[1];
  p.out_channels = ws[0];
  p.group = group;
  int64_t expected_channels = 0;
  if (__builtin_mul_overflow(ws[1], group, &expected_channels) ||
      p.in_channels != expected_channels) {
    return EPCTX_ERROR(kInvalidArgument,
                       "input X has {} channels, expected W[1] = {} times group {}", p.in_channels,
                       ws[1], group);
  }
  if (p.out_channels % group != 0) {
    return EPCTX_ERROR(kInvalidArgument, "W has {} output channels, not a multiple of group {}",
                       p.out_channels, group);
  }
  const std::span<const int64_t> kernel = ws.subspan(2);
  const std::vector<int64_t> w_shape(ws.begin(), ws.end());
  if (!window.kernel_shape.empty() &&
      !std::equal(kernel.begin(), kernel.end(), window.kernel_shape.begin(),
                  window.kernel_shape.end())) {
    return EPCTX_ERROR(kInvalidArgument, "kernel_shape {} differs from W's spatial dims {}",
                       ShapeToString(window.kernel_shape),
                       ShapeToString({kernel.begin(), kernel.end()}));
  }
  for (int64_t k : kernel) {
    if (k < 1) return EPCTX_ERROR(kInvalidArgument, "W has shape {}", ShapeToString(w_shape));
  }
  EPCTX_ASSIGN_OR_RETURN(p.window, ResolveWindow(window, xs.subspan(2), kernel));
  return p;
}

}  // namespace epctx::exec::kernels
