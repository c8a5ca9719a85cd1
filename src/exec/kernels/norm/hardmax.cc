// Hardmax: 1 at the first maximum along the axis, 0 elsewhere, with Softmax's opset-13 change of
// axis semantics (softmax_axis.h). float32 and float64.
#include <algorithm>
#include <memory>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/norm/norm_ops.h"
#include "exec/kernels/norm/softmax_axis.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

template <typename T>
void Hardmax(const AxisSplit& s, const T* x, T* y, int threads) {
  const int nt = ThreadsFor(threads, s.outer * s.len * s.inner);
  ParallelForRanges(nt, s.outer, 1, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const T* xb = x + o * s.len * s.inner;
      T* yb = y + o * s.len * s.inner;
      std::fill(yb, yb + s.len * s.inner, T{0});
      for (int64_t i = 0; i < s.inner; ++i) {
        int64_t best = 0;
        for (int64_t a = 1; a < s.len; ++a) {
          if (xb[a * s.inner + i] > xb[best * s.inner + i]) best = a;
        }
        yb[best * s.inner + i] = T{1};
      }
    }
  });
}

class HardmaxKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool single_axis) {
    auto kernel = std::unique_ptr<HardmaxKernel>(new HardmaxKernel());
    kernel->single_axis_ = single_axis;
    EPCTX_ASSIGN_OR_RETURN(kernel->axis_,
                           node.attrs->GetInt("axis", DefaultSoftmaxAxis(single_axis)));
    if (InputPresent(node, 0))
      EPCTX_RETURN_IF_ERROR(ExpectFloat32Or64(node.inputs[0].dtype, "input"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    EPCTX_RETURN_IF_ERROR(ExpectFloat32Or64(x->dtype(), "input"));
    EPCTX_ASSIGN_OR_RETURN(AxisSplit s, SplitAtSoftmaxAxis(x->shape(), axis_, single_axis_));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), x->shape()));
    if (y->element_count() == 0) return Status::Ok();
    if (x->dtype() == DataType::kFloat32) {
      Hardmax(s, x->data_as<float>(), y->mutable_data_as<float>(), ctx.num_threads());
    } else {
      Hardmax(s, x->data_as<double>(), y->mutable_data_as<double>(), ctx.num_threads());
    }
    return Status::Ok();
  }

 private:
  HardmaxKernel() = default;

  bool single_axis_ = true;
  int64_t axis_ = -1;
};

}  // namespace

void RegisterHardmax(KernelRegistry& registry) {
  registry.Register("", "Hardmax", 1,
                    [](const NodeInfo& node) { return HardmaxKernel::Create(node, false); });
  registry.Register("", "Hardmax", 13,
                    [](const NodeInfo& node) { return HardmaxKernel::Create(node, true); });
}

}  // namespace epctx::exec::kernels
