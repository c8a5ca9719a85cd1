// com.epctx RotateHalf: y = x * cos + rotate_half(x) * sin, where rotate_half(x) =
// Concat(-x[..., s:], x[..., :s]) along the last axis: PyTorch's rotary embedding as a Llama export
// spells it in seven nodes, which the compiler fuses into this one (fuse_rotary.cc). Inputs: x,
// cos, sin (float32, broadcast with each other as the Muls and the Add they replace would), and
// s, the split (one int64 or int32 element, read as both Slices read it: negative counts from the
// end, then clamped to [0, last dim of x]).
// Each element is computed as the nodes compute it: the two products, each rounded, then their
// sum. The build compiles this file with -ffp-contract=off (CMakeLists.txt), so that the compiler
// does not fuse a product and the sum into one rounding; the fusion is then exact, and a model's
// outputs do not change with it.
#include <algorithm>
#include <memory>
#include <vector>

#include "exec/kernels/common/broadcast.h"
#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::attention {
namespace {

// One output row of `len` elements. x has `dim` elements along the row's axis, read with stride
// `xi` (0 when x is broadcast along it, then dim is 1); cos and sin with strides ci and si.
void RotateRow(const float* x, int64_t dim, int64_t split, const float* cos, const float* sin,
               int64_t xi, int64_t ci, int64_t si, int64_t len, float* y) {
  const int64_t negated = dim - split;  // rotate_half's first part: -x[split + j]
  if (xi == 1 && ci == 1 && si == 1) {
    for (int64_t j = 0; j < negated; ++j) {
      const float a = x[j] * cos[j];
      const float b = -x[split + j] * sin[j];
      y[j] = a + b;
    }
    for (int64_t j = negated; j < len; ++j) {
      const float a = x[j] * cos[j];
      const float b = x[j - negated] * sin[j];
      y[j] = a + b;
    }
    return;
  }
  for (int64_t j = 0; j < len; ++j) {
    const int64_t d = j * xi;  // the element of x this output element reads
    const float rotated = d < negated ? -x[split + d] : x[d - negated];
    const float a = x[d] * cos[j * ci];
    const float b = rotated * sin[j * si];
    y[j] = a + b;
  }
}

class RotateHalfKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "x"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "cos"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 2, DataType::kFloat32, "sin"));
    return std::unique_ptr<Kernel>(new RotateHalfKernel());
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "x"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* cos, RequiredInput(ctx, 1, "cos"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* sin, RequiredInput(ctx, 2, "sin"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* split, RequiredInput(ctx, 3, "split"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "x"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*cos, DataType::kFloat32, "cos"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*sin, DataType::kFloat32, "sin"));
    if (x->shape().empty()) return EPCTX_ERROR(kInvalidArgument, "x must have at least one dim");
    if (split->element_count() != 1 ||
        (split->dtype() != DataType::kInt64 && split->dtype() != DataType::kInt32)) {
      return EPCTX_ERROR(kInvalidArgument, "split must be one int64 or int32 element, not {} {}",
                         DataTypeName(split->dtype()), ShapeToString(split->shape()));
    }
    const int64_t dim = x->shape().back();
    int64_t s = split->dtype() == DataType::kInt64 ? split->data_as<int64_t>()[0]
                                                   : split->data_as<int32_t>()[0];
    if (s < 0) s += dim;
    s = std::clamp<int64_t>(s, 0, dim);
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> out, BroadcastShapes(x->shape(), cos->shape()));
    EPCTX_ASSIGN_OR_RETURN(out, BroadcastShapes(out, sin->shape()));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, out));
    if (y->element_count() == 0) return Status::Ok();

    const std::vector<int64_t> xs = BroadcastStrides(x->shape(), out);
    const std::vector<int64_t> cs = BroadcastStrides(cos->shape(), out);
    const std::vector<int64_t> ss = BroadcastStrides(sin->shape(), out);
    const int64_t len = out.back();
    const int64_t rows = y->element_count() / len;
    const float* xp = x->data_as<float>();
    const float* cp = cos->data_as<float>();
    const float* sp = sin->data_as<float>();
    float* yp = y->mutable_data_as<float>();
    const int nt = ThreadsFor(ctx.num_threads(), y->element_count());
    ParallelForRanges(nt, rows, 1, [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r) {
        int64_t xo = 0, co = 0, so = 0;
        for (int64_t rest = r, d = static_cast<int64_t>(out.size()) - 2; d >= 0; --d) {
          const size_t k = static_cast<size_t>(d);
          const int64_t i = rest % out[k];
          rest /= out[k];
          xo += i * xs[k];
          co += i * cs[k];
          so += i * ss[k];
        }
        RotateRow(xp + xo, dim, s, cp + co, sp + so, xs.back(), cs.back(), ss.back(), len,
                  yp + r * len);
      }
    });
    return Status::Ok();
  }

 private:
  RotateHalfKernel() = default;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateRotateHalf(const NodeInfo& node) {
  return RotateHalfKernel::Create(node);
}

}  // namespace epctx::exec::kernels::attention
