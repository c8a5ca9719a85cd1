// MeanVarianceNormalization: y = (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9), the statistics taken
// over `axes` (default [0, 2, 3]) as in the ONNX function body. float32.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class MvnKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<MvnKernel>(new MvnKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->axes_, node.attrs->GetInts("axes", {0, 2, 3}));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "X"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    const std::vector<int64_t>& xs = x->shape();
    const size_t rank = xs.size();
    std::vector<bool> reduced(rank, false);
    for (int64_t a : axes_) {
      EPCTX_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a, static_cast<int64_t>(rank), "axes"));
      reduced[static_cast<size_t>(axis)] = true;
    }
    // Strides into the per-group statistics: 0 along reduced dims.
    std::vector<int64_t> stat_strides(rank, 0);
    int64_t groups = 1;
    for (size_t d = rank; d-- > 0;) {
      if (reduced[d]) continue;
      stat_strides[d] = groups;
      groups *= xs[d];
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, xs));
    const int64_t count = x->element_count();
    if (count == 0) return Status::Ok();
    const float* xp = x->data_as<float>();
    float* yp = y->mutable_data_as<float>();
    std::vector<int64_t> group_of(static_cast<size_t>(count));
    std::vector<int64_t> index(rank, 0);
    for (int64_t e = 0; e < count; ++e) {
      int64_t g = 0;
      for (size_t d = 0; d < rank; ++d) g += index[d] * stat_strides[d];
      group_of[static_cast<size_t>(e)] = g;
      for (size_t d = rank; d-- > 0;) {
        if (++index[d] < xs[d]) break;
        index[d] = 0;
      }
    }
    std::vector<double> sum(static_cast<size_t>(groups), 0.0);
    std::vector<double> sum_sq(static_cast<size_t>(groups), 0.0);
    for (int64_t e = 0; e < count; ++e) {
      const size_t g = static_cast<size_t>(group_of[static_cast<size_t>(e)]);
      sum[g] += xp[e];
      sum_sq[g] += double{xp[e]} * xp[e];
    }
    const double n = static_cast<double>(count / groups);
    std::vector<float> mean(static_cast<size_t>(groups));
    std::vector<float> inv(static_cast<size_t>(groups));
    for (size_t g = 0; g < mean.size(); ++g) {
      const double m = sum[g] / n;
      mean[g] = static_cast<float>(m);
      inv[g] = static_cast<float>(1.0 / (std::sqrt(std::max(0.0, sum_sq[g] / n - m * m)) + 1e-9));
    }
    for (int64_t e = 0; e < count; ++e) {
      const size_t g = static_cast<size_t>(group_of[static_cast<size_t>(e)]);
      yp[e] = (xp[e] - mean[g]) * inv[g];
    }
    return Status::Ok();
  }

 private:
  MvnKernel() = default;
  std::vector<int64_t> axes_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateMeanVarianceNormalization(const NodeInfo& node) {
  return MvnKernel::Create(node);
}

}  // namespace epctx::exec::kernels
