// Softmax. Before opset 13 the input is seen as a 2-D matrix [prod(dims[:axis]),
// prod(dims[axis:])] (axis defaults to 1) and normalized per row; from 13 on it is normalized
// along the single dim `axis` (default -1).
#include <algorithm>
#include <memory>
#include <vector>

#include "exec/kernels/common/eigen.h"
#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/nn/nn_ops.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

void SoftmaxRow(const float* x, float* y, int64_t n) {
  ConstArrayMapF in(x, n);
  ArrayMapF out(y, n);
  const float max = in.maxCoeff();
  out = (in - max).exp();
  out *= 1.0f / out.sum();
}

// Normalizes `len` rows of `inner` elements each along the rows (the strided case).
void SoftmaxColumns(const float* x, float* y, int64_t len, int64_t inner, float* sums) {
  std::copy(x, x + inner, sums);  // running max first, then the sums
  for (int64_t a = 1; a < len; ++a) {
    const float* xr = x + a * inner;
    for (int64_t i = 0; i < inner; ++i) sums[i] = std::max(sums[i], xr[i]);
  }
  for (int64_t a = 0; a < len; ++a) {
    ArrayMapF(y + a * inner, inner) =
        (ConstArrayMapF(x + a * inner, inner) - ConstArrayMapF(sums, inner)).exp();
  }
  std::fill(sums, sums + inner, 0.0f);
  for (int64_t a = 0; a < len; ++a) {
    const float* yr = y + a * inner;
    for (int64_t i = 0; i < inner; ++i) sums[i] += yr[i];
  }
  for (int64_t i = 0; i < inner; ++i) sums[i] = 1.0f / sums[i];
  for (int64_t a = 0; a < len; ++a) {
    float* yr = y + a * inner;
    for (int64_t i = 0; i < inner; ++i) yr[i] *= sums[i];
  }
}

class SoftmaxKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool single_axis) {
    auto kernel = std::unique_ptr<SoftmaxKernel>(new SoftmaxKernel());
    kernel->single_axis_ = single_axis;
    EPCTX_ASSIGN_OR_RETURN(kernel->axis_, node.attrs->GetInt("axis", single_axis ? -1 : 1));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "input"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "input"));
    const std::vector<int64_t>& xs = x->shape();
    const int64_t rank = static_cast<int64_t>(xs.size());
    int64_t outer = 1, len = 1, inner = 1;
    if (single_axis_) {
      EPCTX_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_, rank, "axis"));
      outer = DimProduct(xs, 0, static_cast<size_t>(axis));
      len = xs[static_cast<size_t>(axis)];
      inner = DimProduct(xs, static_cast<size_t>(axis) + 1, xs.size());
    } else {
      // The 2-D view allows axis == rank (rows of one element).
      if (axis_ < -rank || axis_ > rank) {
        return EPCTX_ERROR(kInvalidArgument, "axis {} is out of range for rank {}", axis_, rank);
      }
      const size_t axis = static_cast<size_t>(axis_ < 0 ? axis_ + rank : axis_);
      outer = DimProduct(xs, 0, axis);
      len = DimProduct(xs, axis, xs.size());
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, xs));
    if (y->element_count() == 0) return Status::Ok();
    const float* xp = x->data_as<float>();
    float* yp = y->mutable_data_as<float>();
    const int nt = ThreadsFor(ctx.num_threads(), x->element_count());
    ParallelForRanges(nt, outer, 1, [&](int64_t first, int64_t last) {
      std::vector<float> sums(inner > 1 ? static_cast<size_t>(inner) : 0);
      for (int64_t o = first; o < last; ++o) {
        const int64_t offset = o * len * inner;
        if (inner == 1) {
          SoftmaxRow(xp + offset, yp + offset, len);
        } else {
          SoftmaxColumns(xp + offset, yp + offset, len, inner, sums.data());
        }
      }
    });
    return Status::Ok();
  }

 private:
  SoftmaxKernel() = default;
  bool single_axis_ = true;
  int64_t axis_ = -1;
};

}  // namespace

void RegisterSoftmax(KernelRegistry& registry) {
  registry.Register("", "Softmax", 1,
                    [](const NodeInfo& node) { return SoftmaxKernel::Create(node, false); });
  registry.Register("", "Softmax", 13,
                    [](const NodeInfo& node) { return SoftmaxKernel::Create(node, true); });
}

}  // namespace epctx::exec::kernels
