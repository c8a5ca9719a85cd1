// Where each output element of Resize/Upsample samples its input, one axis at a time: the ONNX
// coordinate transformation modes, nearest rounding modes and the linear and cubic coefficients,
// following the reference implementation (onnx/backend/test/case/node/resize.py), in which the
// input is edge-padded (indices clamp) and an output coordinate landing exactly on an input
// element takes that element alone.
#pragma once

#include <cstdint>
#include <vector>

#include "epctx/status.h"
#include "exec/attributes.h"

namespace epctx::exec::kernels {

enum class ResizeMode { kNearest, kLinear, kCubic };
enum class CoordMode {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize,
};
// kSimple is Resize-10's and Upsample's rule (as ONNX Runtime has it): truncate when upsampling,
// round up when downsampling.
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

struct ResizeAttrs {
  ResizeMode mode = ResizeMode::kNearest;
  CoordMode coord = CoordMode::kHalfPixel;
  NearestMode nearest = NearestMode::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  float extrapolation = 0;
  // Opset 18: how `sizes` on several axes keeps the aspect ratio ("stretch": it does not).
  enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller } aspect = AspectPolicy::kStretch;
};

// Resize from opset 11 on (all attributes).
Result<ResizeAttrs> ParseResizeAttrs(const Attributes& attrs);
// Resize-10 and Upsample: `mode` only; asymmetric coordinates, kSimple rounding.
Result<ResizeAttrs> ParseLegacyResizeAttrs(const Attributes& attrs);

// The input taps of every output index along one axis: taps_per entries per output index
// (index into the axis, weight), and whether the index falls outside the crop
// (tf_crop_and_resize: its value is `extrapolation`).
struct AxisTaps {
  int64_t out = 0;
  int taps_per = 1;
  std::vector<int64_t> index;
  std::vector<float> weight;
  std::vector<uint8_t> outside;
  bool identity = false;  // out == in and every output index takes its own input element
};

// `scale` is out/in as the op defines it (the given scale, or sizes/in); roi_start/roi_end are
// tf_crop_and_resize's normalized crop of this axis.
AxisTaps ComputeAxisTaps(const ResizeAttrs& attrs, int64_t in, int64_t out, double scale,
                         double roi_start, double roi_end);

}  // namespace epctx::exec::kernels
