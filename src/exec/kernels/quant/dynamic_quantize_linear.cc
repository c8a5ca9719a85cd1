// DynamicQuantizeLinear: uint8 quantization with the scale and zero point that map
// [min(0, min x), max(0, max x)] onto [0, 255]; outputs y, y_scale and y_zero_point.
#include <algorithm>
#include <cmath>
#include <memory>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/quant/quant_params.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class DynamicQuantizeLinearKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<DynamicQuantizeLinearKernel>(new DynamicQuantizeLinearKernel());
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "x"));
    kernel->scale_output_ = OutputPresent(node, 1);
    kernel->zero_point_output_ = OutputPresent(node, 2);
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "x"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "x"));
    const float* xp = x->data_as<float>();
    const int64_t n = x->element_count();
    float lo = 0.0f, hi = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      lo = std::min(lo, xp[i]);
      hi = std::max(hi, xp[i]);
    }
    const float scale = (hi - lo) / 255.0f;
    // All zeros: any scale reproduces them; zero point 0 and y = 0.
    const uint8_t zero_point = scale == 0.0f ? 0 : SaturateRound<uint8_t>(0.0f - lo / scale, 0);
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kUint8, x->shape()));
    uint8_t* yp = y->mutable_data_as<uint8_t>();
    if (scale == 0.0f) {
      std::fill(yp, yp + n, uint8_t{0});
    } else {
      const int nt = ThreadsFor(ctx.num_threads(), n);
      ParallelForRanges(nt, n, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          yp[i] = SaturateRound<uint8_t>(xp[i] / scale, zero_point);
        }
      });
    }
    if (scale_output_) {
      EPCTX_ASSIGN_OR_RETURN(Tensor * s, ctx.AllocateOutput(1, DataType::kFloat32, {}));
      *s->mutable_data_as<float>() = scale;
    }
    if (zero_point_output_) {
      EPCTX_ASSIGN_OR_RETURN(Tensor * z, ctx.AllocateOutput(2, DataType::kUint8, {}));
      *z->mutable_data_as<uint8_t>() = zero_point;
    }
    return Status::Ok();
  }

 private:
  DynamicQuantizeLinearKernel() = default;
  bool scale_output_ = false;
  bool zero_point_output_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateDynamicQuantizeLinear(const NodeInfo& node) {
  return DynamicQuantizeLinearKernel::Create(node);
}

}  // namespace epctx::exec::kernels
