#include "exec/kernels/nn/window.h"

#include <algorithm>
#include <string>

#include "epctx/tensor.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {

Result<WindowAttrs> ParseWindowAttrs(const Attributes& attrs) {
  WindowAttrs w;
  EPCTX_ASSIGN_OR_RETURN(std::string auto_pad, attrs.GetString("auto_pad", "NOTSET"));
  if (auto_pad == "NOTSET" || auto_pad.empty()) {
    w.auto_pad = AutoPad::kNotSet;
  } else if (auto_pad == "SAME_UPPER") {
    w.auto_pad = AutoPad::kSameUpper;
  } else if (auto_pad == "SAME_LOWER") {
    w.auto_pad = AutoPad::kSameLower;
  } else if (auto_pad == "VALID") {
    w.auto_pad = AutoPad::kValid;
  } else {
    return EPCTX_ERROR(kInvalidArgument,
                       "auto_pad '{}' is not one of NOTSET, SAME_UPPER, "
                       "SAME_LOWER, VALID",
                       auto_pad);
  }
  EPCTX_ASSIGN_OR_RETURN(w.kernel_shape, attrs.GetInts("kernel_shape"));
  EPCTX_ASSIGN_OR_RETURN(w.strides, attrs.GetInts("strides"));
  EPCTX_ASSIGN_OR_RETURN(w.dilations, attrs.GetInts("dilations"));
  EPCTX_ASSIGN_OR_RETURN(w.pads, attrs.GetInts("pads"));
  EPCTX_ASSIGN_OR_RETURN(int64_t ceil_mode, attrs.GetInt("ceil_mode", 0));
  w.ceil_mode = ceil_mode != 0;
  return w;
}

Status ValidateWindowAttrs(const WindowAttrs& w, size_t rank) {
  if (rank < 1 || rank > 3) {
    return EPCTX_ERROR(kUnsupported, "{} spatial dims are not supported (1 to 3)", rank);
  }
  auto check = [&](const std::vector<int64_t>& v, size_t size, int64_t min,
                   const char* name) -> Status {
    if (v.empty()) return Status::Ok();
    if (v.size() != size) {
      return EPCTX_ERROR(kInvalidArgument, "{} has {} values, expected {}", name, v.size(), size);
    }
    for (int64_t x : v) {
      if (x < min) {
        return EPCTX_ERROR(kInvalidArgument, "{} {} holds {}, expected at least {}", name,
                           ShapeToString(v), x, min);
      }
    }
    return Status::Ok();
  };
  EPCTX_RETURN_IF_ERROR(check(w.kernel_shape, rank, 1, "kernel_shape"));
  EPCTX_RETURN_IF_ERROR(check(w.strides, rank, 1, "strides"));
  EPCTX_RETURN_IF_ERROR(check(w.dilations, rank, 1, "dilations"));
  EPCTX_RETURN_IF_ERROR(check(w.pads, 2 * rank, 0, "pads"));
  return Status::Ok();
}

Result<Window3d> ResolveWindow(const WindowAttrs& attrs, std::span<const int64_t> in_spatial,
                               std::span<const int64_t> kernel) {
  const size_t rank = in_spatial.size();
  EPCTX_RETURN_IF_ERROR(ValidateWindowAttrs(attrs, rank));
  Window3d w;
  w.out_spatial.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    const size_t j = 3 - rank + i;
    const int64_t in = in_spatial[i];
    const int64_t k = kernel[i];
    const int64_t s = attrs.strides.empty() ? 1 : attrs.strides[i];
    const int64_t d = attrs.dilations.empty() ? 1 : attrs.dilations[i];
    const int64_t span = (k - 1) * d + 1;
    int64_t pb = 0;
    int64_t pe = 0;
    int64_t out = 0;
    if (attrs.auto_pad == AutoPad::kSameUpper || attrs.auto_pad == AutoPad::kSameLower) {
      out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + span - in);
      pb = attrs.auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
      pe = total - pb;
    } else {
      if (attrs.auto_pad == AutoPad::kNotSet && !attrs.pads.empty()) {
        pb = attrs.pads[i];
        pe = attrs.pads[rank + i];
      }
      const int64_t room = in + pb + pe - span;
      if (room < 0) {
        return EPCTX_ERROR(kInvalidArgument,
                           "spatial dim {} of the input is {} (padded {}), smaller than the "
                           "dilated kernel {}",
                           i, in, in + pb + pe, span);
      }
      out = (attrs.ceil_mode ? (room + s - 1) / s : room / s) + 1;
      // A last window starting in the end padding would see no input; ceil mode drops it.
      if (attrs.ceil_mode && (out - 1) * s >= in + pb) --out;
    }
    w.in[j] = in;
    w.out[j] = out;
    w.kernel[j] = k;
    w.stride[j] = s;
    w.dilation[j] = d;
    w.pad_begin[j] = pb;
    w.pad_end[j] = pe;
    w.out_spatial[i] = out;
  }
  return w;
}

}  // namespace epctx::exec::kernels
