#include "exec/kernels/image/resize_geometry.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

Result<ResizeMode> ParseMode(const std::string& mode) {
  if (mode == "nearest") return ResizeMode::kNearest;
  if (mode == "linear" || mode == "bilinear") return ResizeMode::kLinear;
  if (mode == "cubic") return ResizeMode::kCubic;
  return EPCTX_ERROR(kUnsupported, "mode '{}' is not supported", mode);
}

// The input coordinate that output index x maps to; `outside` is set when tf_crop_and_resize
// lands outside the input.
double OriginalCoordinate(const ResizeAttrs& a, double x, int64_t in, int64_t out, double scale,
                          double roi_start, double roi_end, bool* outside) {
  // The reference takes the output length as scale * in, unrounded, where the mode uses it.
  const double out_f = scale * static_cast<double>(in);
  const double in_last = static_cast<double>(in - 1);
  switch (a.coord) {
    case CoordMode::kHalfPixel:
      return (x + 0.5) / scale - 0.5;
    case CoordMode::kHalfPixelSymmetric: {
      // half_pixel, shifted so that the output stays centred on the input when the output
      // length was rounded down from scale * in.
      const double adjustment = static_cast<double>(out) / out_f;
      const double offset = static_cast<double>(in) / 2.0 * (1.0 - adjustment);
      return offset + (x + 0.5) / scale - 0.5;
    }
    case CoordMode::kPytorchHalfPixel:
      return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case CoordMode::kAlignCorners:
      return out_f == 1.0 ? 0.0 : x * in_last / (out_f - 1.0);
    case CoordMode::kAsymmetric:
      return x / scale;
    case CoordMode::kTfHalfPixelForNn:
      return (x + 0.5) / scale;
    case CoordMode::kTfCropAndResize: {
      const double c = out_f == 1.0 ? (roi_end - roi_start) * in_last / 2.0
                                    : x * (roi_end - roi_start) * in_last / (out_f - 1.0);
      const double xo = c + roi_start * in_last;
      *outside = xo < 0.0 || xo > in_last;
      return xo;
    }
  }
  return 0.0;
}

int64_t NearestIndex(NearestMode mode, double xo, double scale) {
  const double fl = std::floor(xo);
  const double frac = xo - fl;
  if (frac == 0.0) return static_cast<int64_t>(fl);
  switch (mode) {
    case NearestMode::kRoundPreferFloor:
      return static_cast<int64_t>(frac <= 0.5 ? fl : fl + 1);
    case NearestMode::kRoundPreferCeil:
      return static_cast<int64_t>(frac < 0.5 ? fl : fl + 1);
    case NearestMode::kFloor:
      return static_cast<int64_t>(fl);
    case NearestMode::kCeil:
      return static_cast<int64_t>(fl + 1);
    case NearestMode::kSimple:
      return scale < 1.0 ? static_cast<int64_t>(std::ceil(xo)) : static_cast<int64_t>(xo);
  }
  return 0;
}

void CubicCoefficients(double r, double a, double* c) {
  const double r1 = r + 1, q = 1 - r, q1 = q + 1;
  c[0] = ((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a;
  c[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
  c[2] = ((a + 2) * q - (a + 3)) * q * q + 1;
  c[3] = ((a * q1 - 5 * a) * q1 + 8 * a) * q1 - 4 * a;
}

}  // namespace

Result<ResizeAttrs> ParseResizeAttrs(const Attributes& attrs) {
  ResizeAttrs a;
  EPCTX_ASSIGN_OR_RETURN(std::string mode, attrs.GetString("mode", "nearest"));
  EPCTX_ASSIGN_OR_RETURN(a.mode, ParseMode(mode));
  EPCTX_ASSIGN_OR_RETURN(std::string coord,
                         attrs.GetString("coordinate_transformation_mode", "half_pixel"));
  if (coord == "half_pixel") {
    a.coord = CoordMode::kHalfPixel;
  } else if (coord == "half_pixel_symmetric") {
    a.coord = CoordMode::kHalfPixelSymmetric;
  } else if (coord == "pytorch_half_pixel") {
    a.coord = CoordMode::kPytorchHalfPixel;
  } else if (coord == "align_corners") {
    a.coord = CoordMode::kAlignCorners;
  } else if (coord == "asymmetric") {
    a.coord = CoordMode::kAsymmetric;
  } else if (coord == "tf_half_pixel_for_nn") {
    a.coord = CoordMode::kTfHalfPixelForNn;
  } else if (coord == "tf_crop_and_resize") {
    a.coord = CoordMode::kTfCropAndResize;
  } else {
    return EPCTX_ERROR(kUnsupported, "coordinate_transformation_mode '{}' is not supported", coord);
  }
  EPCTX_ASSIGN_OR_RETURN(std::string nearest,
                         attrs.GetString("nearest_mode", "round_prefer_floor"));
  if (nearest == "round_prefer_floor") {
    a.nearest = NearestMode::kRoundPreferFloor;
  } else if (nearest == "round_prefer_ceil") {
    a.nearest = NearestMode::kRoundPreferCeil;
  } else if (nearest == "floor") {
    a.nearest = NearestMode::kFloor;
  } else if (nearest == "ceil") {
    a.nearest = NearestMode::kCeil;
  } else {
    return EPCTX_ERROR(kUnsupported, "nearest_mode '{}' is not supported", nearest);
  }
  EPCTX_ASSIGN_OR_RETURN(float cubic_a, attrs.GetFloat("cubic_coeff_a", -0.75f));
  a.cubic_a = cubic_a;
  EPCTX_ASSIGN_OR_RETURN(int64_t exclude, attrs.GetInt("exclude_outside", 0));
  a.exclude_outside = exclude != 0;
  EPCTX_ASSIGN_OR_RETURN(a.extrapolation, attrs.GetFloat("extrapolation_value", 0.0f));
  EPCTX_ASSIGN_OR_RETURN(int64_t antialias, attrs.GetInt("antialias", 0));
  if (antialias != 0) {
    return EPCTX_ERROR(kUnsupported, "antialias={} is not supported", antialias);
  }
  EPCTX_ASSIGN_OR_RETURN(std::string aspect,
                         attrs.GetString("keep_aspect_ratio_policy", "stretch"));
  if (aspect == "stretch") {
    a.aspect = ResizeAttrs::AspectPolicy::kStretch;
  } else if (aspect == "not_larger") {
    a.aspect = ResizeAttrs::AspectPolicy::kNotLarger;
  } else if (aspect == "not_smaller") {
    a.aspect = ResizeAttrs::AspectPolicy::kNotSmaller;
  } else {
    return EPCTX_ERROR(kInvalidArgument,
                       "keep_aspect_ratio_policy '{}' is not stretch, not_larger or not_smaller",
                       aspect);
  }
  return a;
}

Result<ResizeAttrs> ParseLegacyResizeAttrs(const Attributes& attrs) {
  ResizeAttrs a;
  EPCTX_ASSIGN_OR_RETURN(std::string mode, attrs.GetString("mode", "nearest"));
  EPCTX_ASSIGN_OR_RETURN(a.mode, ParseMode(mode));
  if (a.mode == ResizeMode::kCubic) {
    return EPCTX_ERROR(kUnsupported, "mode 'cubic' is not supported before opset 11");
  }
  a.coord = CoordMode::kAsymmetric;
  a.nearest = NearestMode::kSimple;
  return a;
}

AxisTaps ComputeAxisTaps(const ResizeAttrs& a, int64_t in, int64_t out, double scale,
                         double roi_start, double roi_end) {
  AxisTaps t;
  t.out = out;
  t.taps_per = a.mode == ResizeMode::kNearest ? 1 : a.mode == ResizeMode::kLinear ? 2 : 4;
  const size_t n = static_cast<size_t>(out) * static_cast<size_t>(t.taps_per);
  t.index.resize(n);
  t.weight.resize(n);
  t.outside.assign(static_cast<size_t>(out), 0);
  bool identity = out == in;
  for (int64_t x = 0; x < out; ++x) {
    bool outside = false;
    double xo =
        OriginalCoordinate(a, static_cast<double>(x), in, out, scale, roi_start, roi_end, &outside);
    // Beyond a few elements outside the input every tap is clamped (or excluded) alike, so the
    // coordinate can be bounded before it becomes an index; a NaN roi reads as outside the crop.
    if (std::isnan(xo)) {
      xo = 0;
      outside = a.coord == CoordMode::kTfCropAndResize;
    }
    xo = std::clamp(xo, -4.0, static_cast<double>(in) + 4.0);
    t.outside[static_cast<size_t>(x)] = outside;
    int64_t* idx = &t.index[static_cast<size_t>(x * t.taps_per)];
    float* w = &t.weight[static_cast<size_t>(x * t.taps_per)];
    if (a.mode == ResizeMode::kNearest) {
      idx[0] = std::clamp<int64_t>(NearestIndex(a.nearest, xo, scale), 0, in - 1);
      w[0] = 1.0f;
      identity = identity && !outside && idx[0] == x;
      continue;
    }
    // The ratio lies in (0, 1]: an exact hit is taken as the far end of the interval before it.
    double base = std::floor(xo);
    double r = xo - base;
    if (r == 0.0) {
      r = 1.0;
      base -= 1.0;
    }
    double c[4];
    int64_t first;
    if (a.mode == ResizeMode::kLinear) {
      c[0] = 1.0 - r;
      c[1] = r;
      first = static_cast<int64_t>(base);
    } else {
      CubicCoefficients(r, a.cubic_a, c);
      first = static_cast<int64_t>(base) - 1;
    }
    if (a.exclude_outside) {
      double sum = 0;
      for (int k = 0; k < t.taps_per; ++k) {
        const int64_t i = first + k;
        if (i < 0 || i >= in) c[k] = 0;
        sum += c[k];
      }
      for (int k = 0; k < t.taps_per; ++k) c[k] = sum != 0 ? c[k] / sum : 0.0;
    }
    for (int k = 0; k < t.taps_per; ++k) {
      idx[k] = std::clamp<int64_t>(first + k, 0, in - 1);
      w[k] = static_cast<float>(c[k]);
    }
    identity = identity && !outside && xo == static_cast<double>(x);
  }
  t.identity = identity;
  return t;
}

}  // namespace epctx::exec::kernels
