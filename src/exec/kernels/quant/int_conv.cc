#include "exec/kernels/quant/int_conv.h"

#include <algorithm>
#include <span>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/quant/int_matmul.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// col [channels * taps, out positions] of one group's input x [channels, in...].
void Im2ColInt(const int32_t* x, int64_t channels, const Window3d& w, int32_t* col) {
  const int64_t positions = w.out_size();
  int32_t* out = col;
  for (int64_t c = 0; c < channels; ++c) {
    const int32_t* xc = x + c * w.in_size();
    for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
          for (int64_t od = 0; od < w.out[0]; ++od) {
            const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
            for (int64_t oh = 0; oh < w.out[1]; ++oh) {
              const int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
              int32_t* row = out + (od * w.out[1] + oh) * w.out[2];
              if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1]) {
                std::fill(row, row + w.out[2], 0);
                continue;
              }
              const int32_t* xr = xc + (id * w.in[1] + ih) * w.in[2];
              for (int64_t ow = 0; ow < w.out[2]; ++ow) {
                const int64_t iw = ow * w.stride[2] - w.pad_begin[2] + kw * w.dilation[2];
                row[ow] = iw >= 0 && iw < w.in[2] ? xr[iw] : 0;
              }
            }
          }
          out += positions;
        }
      }
    }
  }
}

}  // namespace

Result<IntConvProblem> DescribeIntConv(const WindowAttrs& attrs, int64_t group,
                                       const std::vector<int64_t>& xs,
                                       const std::vector<int64_t>& ws) {
  if (ws.size() < 3 || ws.size() > 5) {
    return EPCTX_ERROR(kInvalidArgument, "input w has rank {}, expected 3 to 5", ws.size());
  }
  if (xs.size() != ws.size()) {
    return EPCTX_ERROR(kInvalidArgument, "input x has rank {}, expected {} (the rank of w)",
                       xs.size(), ws.size());
  }
  if (group < 1) return EPCTX_ERROR(kInvalidArgument, "group is {}, expected >= 1", group);
  IntConvProblem p;
  p.batch = xs[0];
  p.in_channels = xs[1];
  p.out_channels = ws[0];
  p.group = group;
  int64_t channels = 0;
  if (__builtin_mul_overflow(ws[1], group, &channels) || channels != p.in_channels ||
      p.out_channels % group != 0) {
    return EPCTX_ERROR(kInvalidArgument,
                       "input x has {} channels and w has shape {}, which group {} does not fit",
                       p.in_channels, ShapeToString(ws), group);
  }
  const std::span<const int64_t> kernel(ws.data() + 2, ws.size() - 2);
  for (int64_t k : kernel) {
    if (k < 1) return EPCTX_ERROR(kInvalidArgument, "w has shape {}", ShapeToString(ws));
  }
  if (!attrs.kernel_shape.empty() &&
      !std::equal(kernel.begin(), kernel.end(), attrs.kernel_shape.begin(),
                  attrs.kernel_shape.end())) {
    return EPCTX_ERROR(kInvalidArgument, "kernel_shape {} differs from w's spatial dims",
                       ShapeToString(attrs.kernel_shape));
  }
  EPCTX_ASSIGN_OR_RETURN(p.window, ResolveWindow(attrs, {xs.data() + 2, xs.size() - 2}, kernel));
  p.out_shape = {p.batch, p.out_channels};
  p.out_shape.insert(p.out_shape.end(), p.window.out_spatial.begin(), p.window.out_spatial.end());
  return p;
}

void IntConv(const IntConvProblem& p, const int32_t* x, const int32_t* w, int32_t* y, int threads) {
  const Window3d& win = p.window;
  const int64_t cg = p.in_channels / p.group;
  const int64_t mg = p.out_channels / p.group;
  const int64_t k = cg * win.kernel_size();
  const int64_t positions = win.out_size();
  const int64_t tasks = p.batch * p.group;
  const int nt = ThreadsFor(threads, tasks * mg * k * positions, int64_t{1} << 18);
  ParallelForRanges(nt, tasks, 1, [&](int64_t begin, int64_t end) {
    std::vector<int32_t> col(static_cast<size_t>(k * positions));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t n = task / p.group, g = task % p.group;
      Im2ColInt(x + (n * p.in_channels + g * cg) * win.in_size(), cg, win, col.data());
      Int8Gemm(mg, positions, k, w + g * mg * k, col.data(),
               y + (n * p.out_channels + g * mg) * positions, tasks == 1 ? nt : 1);
    }
  });
}

}  // namespace epctx::exec::kernels
