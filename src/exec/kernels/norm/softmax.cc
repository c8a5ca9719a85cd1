// Softmax, with the axis rule of its family (softmax_axis.h: a 2-D view before opset 13, the
// single dim `axis` from 13 on).
#include <algorithm>
#include <memory>
#include <vector>

#include "exec/kernels/common/eigen.h"
#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/norm/softmax_axis.h"
#include "exec/kernels/norm/softmax_row.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

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
    EPCTX_ASSIGN_OR_RETURN(kernel->axis_,
                           node.attrs->GetInt("axis", DefaultSoftmaxAxis(single_axis)));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "input"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "input"));
    const std::vector<int64_t>& xs = x->shape();
    EPCTX_ASSIGN_OR_RETURN(AxisSplit split, SplitAtSoftmaxAxis(xs, axis_, single_axis_));
    const int64_t outer = split.outer, len = split.len, inner = split.inner;
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

Result<std::unique_ptr<Kernel>> CreateSoftmax(const NodeInfo& node) {
  return SoftmaxKernel::Create(node, node.opset >= 13);
}

}  // namespace epctx::exec::kernels
