// LpPool and GlobalLpPool (from opset 2, where p became an integer): y = (sum of |x|^p over the
// window)^(1/p), padding contributing nothing. p = 1 and p = 2 avoid pow. float32.
#include <cmath>
#include <memory>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/nn/window.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

struct PNorm {
  int64_t p = 2;
  float Power(float v) const {
    const float a = std::fabs(v);
    return p == 1 ? a : p == 2 ? a * a : std::pow(a, static_cast<float>(p));
  }
  float Root(float sum) const {
    return p == 1 ? sum : p == 2 ? std::sqrt(sum) : std::pow(sum, 1.0f / static_cast<float>(p));
  }
};

void LpPoolPlane(const Window3d& w, PNorm norm, const float* x, float* y) {
  for (int64_t od = 0; od < w.out[0]; ++od) {
    for (int64_t oh = 0; oh < w.out[1]; ++oh) {
      for (int64_t ow = 0; ow < w.out[2]; ++ow) {
        const int64_t d0 = od * w.stride[0] - w.pad_begin[0];
        const int64_t h0 = oh * w.stride[1] - w.pad_begin[1];
        const int64_t w0 = ow * w.stride[2] - w.pad_begin[2];
        float acc = 0;
        for (int64_t kd = FirstInside(d0, w.dilation[0], 0);
             kd < std::min(w.kernel[0], EndInside(d0, w.dilation[0], w.in[0])); ++kd) {
          const int64_t id = d0 + kd * w.dilation[0];
          for (int64_t kh = FirstInside(h0, w.dilation[1], 0);
               kh < std::min(w.kernel[1], EndInside(h0, w.dilation[1], w.in[1])); ++kh) {
            const float* row = x + (id * w.in[1] + h0 + kh * w.dilation[1]) * w.in[2];
            for (int64_t kw = FirstInside(w0, w.dilation[2], 0);
                 kw < std::min(w.kernel[2], EndInside(w0, w.dilation[2], w.in[2])); ++kw) {
              acc += norm.Power(row[w0 + kw * w.dilation[2]]);
            }
          }
        }
        y[(od * w.out[1] + oh) * w.out[2] + ow] = norm.Root(acc);
      }
    }
  }
}

class LpPoolKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool global) {
    auto kernel = std::unique_ptr<LpPoolKernel>(new LpPoolKernel());
    kernel->global_ = global;
    EPCTX_ASSIGN_OR_RETURN(kernel->norm_.p, node.attrs->GetInt("p", 2));
    if (kernel->norm_.p < 1) {
      return EPCTX_ERROR(kInvalidArgument, "p is {}, expected at least 1", kernel->norm_.p);
    }
    if (!global) {
      EPCTX_ASSIGN_OR_RETURN(kernel->window_, ParseWindowAttrs(*node.attrs));
      EPCTX_RETURN_IF_ERROR(node.attrs->Require("kernel_shape", AttrType::kInts).status());
      EPCTX_RETURN_IF_ERROR(
          ValidateWindowAttrs(kernel->window_, kernel->window_.kernel_shape.size()));
    }
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "X"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    const std::vector<int64_t>& xs = x->shape();
    if (xs.size() < 3) {
      return EPCTX_ERROR(kInvalidArgument, "input X has rank {}, expected at least 3", xs.size());
    }
    const float* xp = x->data_as<float>();
    EPCTX_ASSIGN_OR_RETURN(const int64_t planes, CheckedDimProduct(xs, 0, 2));
    if (global_) {
      std::vector<int64_t> y_shape(xs.size(), 1);
      y_shape[0] = xs[0];
      y_shape[1] = xs[1];
      EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, y_shape));
      EPCTX_ASSIGN_OR_RETURN(const int64_t inner, CheckedDimProduct(xs, 2, xs.size()));
      float* yp = y->mutable_data_as<float>();
      for (int64_t p = 0; p < planes; ++p) {
        float acc = 0;
        for (int64_t i = 0; i < inner; ++i) acc += norm_.Power(xp[p * inner + i]);
        yp[p] = norm_.Root(acc);
      }
      return Status::Ok();
    }
    const size_t spatial = window_.kernel_shape.size();
    EPCTX_RETURN_IF_ERROR(ExpectRank(*x, spatial + 2, "X"));
    EPCTX_ASSIGN_OR_RETURN(Window3d w,
                           ResolveWindow(window_, {xs.data() + 2, spatial}, window_.kernel_shape));
    std::vector<int64_t> y_shape{xs[0], xs[1]};
    y_shape.insert(y_shape.end(), w.out_spatial.begin(), w.out_spatial.end());
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, y_shape));
    float* yp = y->mutable_data_as<float>();
    const int nt = ThreadsFor(ctx.num_threads(), y->element_count() * w.kernel_size());
    const PNorm norm = norm_;
    ParallelForRanges(nt, planes, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        LpPoolPlane(w, norm, xp + p * w.in_size(), yp + p * w.out_size());
      }
    });
    return Status::Ok();
  }

 private:
  LpPoolKernel() = default;
  bool global_ = false;
  PNorm norm_;
  WindowAttrs window_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateLpPool(const NodeInfo& node) {
  return LpPoolKernel::Create(node, false);
}

Result<std::unique_ptr<Kernel>> CreateGlobalLpPool(const NodeInfo& node) {
  return LpPoolKernel::Create(node, true);
}

}  // namespace epctx::exec::kernels
