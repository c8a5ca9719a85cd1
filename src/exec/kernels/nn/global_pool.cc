// GlobalAveragePool and GlobalMaxPool: one value per (image, channel) plane.
#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class GlobalPoolKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool max) {
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "X"));
    auto kernel = std::unique_ptr<GlobalPoolKernel>(new GlobalPoolKernel());
    kernel->max_ = max;
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    const std::vector<int64_t>& xs = x->shape();
    if (xs.size() < 3) {
      return EPCTX_ERROR(kInvalidArgument, "input X has rank {}, expected at least 3", xs.size());
    }
    std::vector<int64_t> y_shape(xs.size(), 1);
    y_shape[0] = xs[0];
    y_shape[1] = xs[1];
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, y_shape));
    EPCTX_ASSIGN_OR_RETURN(const int64_t planes, CheckedDimProduct(xs, 0, 2));
    EPCTX_ASSIGN_OR_RETURN(const int64_t inner, CheckedDimProduct(xs, 2, xs.size()));
    const float* xp = x->data_as<float>();
    float* yp = y->mutable_data_as<float>();
    const int nt = ThreadsFor(ctx.num_threads(), x->element_count());
    const bool max = max_;
    ParallelForRanges(nt, planes, 1, [&](int64_t first, int64_t last) {
      for (int64_t plane = first; plane < last; ++plane) {
        const float* in = xp + plane * inner;
        if (max) {
          float m = -std::numeric_limits<float>::infinity();
          for (int64_t i = 0; i < inner; ++i) m = std::max(m, in[i]);
          yp[plane] = m;
        } else {
          // Summed in double: planes can be large and the mean must not drift.
          double sum = 0;
          for (int64_t i = 0; i < inner; ++i) sum += in[i];
          yp[plane] = inner > 0 ? static_cast<float>(sum / static_cast<double>(inner)) : 0.0f;
        }
      }
    });
    return Status::Ok();
  }

 private:
  GlobalPoolKernel() = default;
  bool max_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateGlobalAveragePool(const NodeInfo& node) {
  return GlobalPoolKernel::Create(node, false);
}

Result<std::unique_ptr<Kernel>> CreateGlobalMaxPool(const NodeInfo& node) {
  return GlobalPoolKernel::Create(node, true);
}

}  // namespace epctx::exec::kernels
