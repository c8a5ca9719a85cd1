// MaxPool and AveragePool over 1 to 3 spatial dims (only output 0 of MaxPool; no Indices).
#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/nn/nn_ops.h"
#include "exec/kernels/nn/window.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

enum class PoolKind { kMax, kAverage };

// For every output index along one axis: the kernel taps [lo, hi) that land inside the input,
// and how many land inside the padded input (AveragePool's count_include_pad divisor).
struct AxisTaps {
  std::vector<int64_t> lo, hi, padded;
};

AxisTaps TapsOf(const Window3d& w, int axis) {
  AxisTaps t;
  const int64_t out = w.out[axis], k = w.kernel[axis], s = w.stride[axis], d = w.dilation[axis];
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * s - w.pad_begin[axis];
    const int64_t lo = std::min(k, FirstInside(start, d, 0));
    const int64_t hi = std::max(lo, std::min(k, EndInside(start, d, w.in[axis])));
    const int64_t plo = std::min(k, FirstInside(start, d, -w.pad_begin[axis]));
    const int64_t phi =
        std::max(plo, std::min(k, EndInside(start, d, w.in[axis] + w.pad_end[axis])));
    t.lo.push_back(lo);
    t.hi.push_back(hi);
    t.padded.push_back(phi - plo);
  }
  return t;
}

template <PoolKind kKind>
void PoolPlane(const Window3d& w, const std::array<AxisTaps, 3>& taps, bool count_include_pad,
               const float* x, float* y) {
  for (int64_t od = 0; od < w.out[0]; ++od) {
    for (int64_t oh = 0; oh < w.out[1]; ++oh) {
      for (int64_t ow = 0; ow < w.out[2]; ++ow) {
        const int64_t o[3] = {od, oh, ow};
        int64_t first[3];
        for (int a = 0; a < 3; ++a) first[a] = o[a] * w.stride[a] - w.pad_begin[a];
        float acc = kKind == PoolKind::kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
        for (int64_t kd = taps[0].lo[od]; kd < taps[0].hi[od]; ++kd) {
          const int64_t id = first[0] + kd * w.dilation[0];
          for (int64_t kh = taps[1].lo[oh]; kh < taps[1].hi[oh]; ++kh) {
            const float* xr = x + (id * w.in[1] + first[1] + kh * w.dilation[1]) * w.in[2];
            for (int64_t kw = taps[2].lo[ow]; kw < taps[2].hi[ow]; ++kw) {
              const float v = xr[first[2] + kw * w.dilation[2]];
              if constexpr (kKind == PoolKind::kMax) {
                acc = std::max(acc, v);
              } else {
                acc += v;
              }
            }
          }
        }
        if constexpr (kKind == PoolKind::kAverage) {
          int64_t count = 1;
          for (int a = 0; a < 3; ++a) {
            const AxisTaps& t = taps[a];
            count *= count_include_pad ? t.padded[o[a]] : t.hi[o[a]] - t.lo[o[a]];
          }
          acc = count > 0 ? acc / static_cast<float>(count) : 0.0f;
        }
        y[(od * w.out[1] + oh) * w.out[2] + ow] = acc;
      }
    }
  }
}

class PoolKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, PoolKind kind) {
    auto kernel = std::unique_ptr<PoolKernel>(new PoolKernel());
    kernel->kind_ = kind;
    EPCTX_ASSIGN_OR_RETURN(kernel->window_, ParseWindowAttrs(*node.attrs));
    EPCTX_RETURN_IF_ERROR(node.attrs->Require("kernel_shape", AttrType::kInts).status());
    EPCTX_RETURN_IF_ERROR(
        ValidateWindowAttrs(kernel->window_, kernel->window_.kernel_shape.size()));
    EPCTX_ASSIGN_OR_RETURN(int64_t include_pad, node.attrs->GetInt("count_include_pad", 0));
    kernel->count_include_pad_ = include_pad != 0;
    if (kind == PoolKind::kMax && OutputPresent(node, 1)) {
      return EPCTX_ERROR(kUnsupported, "output Indices is not supported");
    }
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticRank(node, 0, kernel->window_.kernel_shape.size() + 2, "X"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    const size_t spatial = window_.kernel_shape.size();
    EPCTX_RETURN_IF_ERROR(ExpectRank(*x, spatial + 2, "X"));
    const std::vector<int64_t>& xs = x->shape();
    EPCTX_ASSIGN_OR_RETURN(Window3d w,
                           ResolveWindow(window_, {xs.data() + 2, spatial}, window_.kernel_shape));
    std::vector<int64_t> y_shape{xs[0], xs[1]};
    y_shape.insert(y_shape.end(), w.out_spatial.begin(), w.out_spatial.end());
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, y_shape));
    const std::array<AxisTaps, 3> taps{TapsOf(w, 0), TapsOf(w, 1), TapsOf(w, 2)};
    const int64_t planes = xs[0] * xs[1];
    const float* xp = x->data_as<float>();
    float* yp = y->mutable_data_as<float>();
    const int64_t work = y->element_count() * w.kernel_size();
    const int nt = ThreadsFor(ctx.num_threads(), work);
    const bool include_pad = count_include_pad_;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t plane = 0; plane < planes; ++plane) {
      const float* in = xp + plane * w.in_size();
      float* out = yp + plane * w.out_size();
      if (kind_ == PoolKind::kMax) {
        PoolPlane<PoolKind::kMax>(w, taps, include_pad, in, out);
      } else {
        PoolPlane<PoolKind::kAverage>(w, taps, include_pad, in, out);
      }
    }
    return Status::Ok();
  }

 private:
  PoolKernel() = default;
  PoolKind kind_ = PoolKind::kMax;
  WindowAttrs window_;
  bool count_include_pad_ = false;
};

}  // namespace

void RegisterPool(KernelRegistry& registry) {
  registry.Register("", "MaxPool", 1,
                    [](const NodeInfo& node) { return PoolKernel::Create(node, PoolKind::kMax); });
  registry.Register("", "AveragePool", 1, [](const NodeInfo& node) {
    return PoolKernel::Create(node, PoolKind::kAverage);
  });
}

}  // namespace epctx::exec::kernels
