// Resampling of a tensor by per-axis taps (resize_geometry.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "epctx/status.h"
#include "exec/kernels/image/resize_geometry.h"

namespace epctx::exec::kernels {

// Linear and cubic on float32, separably: one pass per axis that changes, shrinking axes first
// so that later passes see less data. An output index outside the crop along any axis gets
// `extrapolation`. Fails only when a product of dims overflows int64.
Status ResizeSeparableF32(const float* x, std::span<const int64_t> in_shape,
                          const std::vector<AxisTaps>& taps, float extrapolation, float* y,
                          int threads);

// Nearest (one tap per index): a gather of elements of `element_size` bytes (1, 2, 4 or 8);
// `extrapolation` points to one element's bytes.
void ResizeNearest(const void* x, std::span<const int64_t> in_shape,
                   const std::vector<AxisTaps>& taps, size_t element_size,
                   const void* extrapolation, void* y, int threads);

}  // namespace epctx::exec::kernels
