// Sliding-window attributes shared by Conv and the pooling ops (kernel_shape, strides,
// dilations, pads, auto_pad, ceil_mode) and the geometry they give on a concrete input.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "epctx/status.h"
#include "exec/attributes.h"

namespace epctx::exec::kernels {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

struct WindowAttrs {
  AutoPad auto_pad = AutoPad::kNotSet;
  std::vector<int64_t> kernel_shape;  // empty: Conv takes it from W
  std::vector<int64_t> strides;       // empty: all 1
  std::vector<int64_t> dilations;     // empty: all 1
  std::vector<int64_t> pads;          // empty: all 0; else [begin..., end...]
  bool ceil_mode = false;             // pooling only
};

Result<WindowAttrs> ParseWindowAttrs(const Attributes& attrs);

// Sizes and signs of the attributes against a spatial rank (1 to 3).
Status ValidateWindowAttrs(const WindowAttrs& attrs, size_t spatial_rank);

// Geometry with up to 3 spatial dims, padded at the front with unit dims so that one loop nest
// serves 1D, 2D and 3D. Index 2 is the innermost (width).
struct Window3d {
  std::array<int64_t, 3> in{1, 1, 1};
  std::array<int64_t, 3> out{1, 1, 1};
  std::array<int64_t, 3> kernel{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1};
  std::array<int64_t, 3> dilation{1, 1, 1};
  std::array<int64_t, 3> pad_begin{0, 0, 0};
  std::array<int64_t, 3> pad_end{0, 0, 0};
  std::vector<int64_t> out_spatial;  // the real output dims (1 to 3 of them)

  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
};

// Resolves auto_pad and the output extent for `in_spatial` and `kernel` (same length).
Result<Window3d> ResolveWindow(const WindowAttrs& attrs, std::span<const int64_t> in_spatial,
                               std::span<const int64_t> kernel);

// Smallest n >= 0 with start + n * step >= lo (step > 0).
inline int64_t FirstInside(int64_t start, int64_t step, int64_t lo) {
  return start >= lo ? 0 : (lo - start + step - 1) / step;
}
// Smallest n >= 0 with start + n * step >= hi, i.e. the end of the indices below hi.
inline int64_t EndInside(int64_t start, int64_t step, int64_t hi) {
  return start >= hi ? 0 : (hi - start + step - 1) / step;
}

}  // namespace epctx::exec::kernels
