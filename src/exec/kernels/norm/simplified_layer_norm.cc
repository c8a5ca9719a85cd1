// SimplifiedLayerNormalization (ONNX Runtime's RMS normalization, registered by it in the ONNX
// domain, version 1): every row of prod(dims[axis:]) elements is divided by its root mean square
// (sqrt(mean(x^2) + epsilon)) and multiplied by `scale`. The optional output inv_std_var holds
// 1 / that root mean square per row, shape dims[:axis] + [1, ...]. As in ONNX Runtime 1.30, the
// scale broadcasts to X numpy-style, right-aligned and of rank at most X's: usually it is one
// row, but it may also vary along the dims before `axis` (one scale per batch, say). stash_type
// is accepted and changes nothing: ONNX Runtime's CPU kernel computes float32 rows in float32
// whatever it says. float32 only.
#include <cmath>
#include <memory>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/norm/norm_stats.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// The scale of each row of X (X seen as [rows, norm]).
struct ScaleRows {
  const float* data = nullptr;
  std::vector<float> storage;
  // X's dims before the axis and the scale's element stride along each (0 where it is
  // broadcast); empty when every row has the same scale.
  std::vector<int64_t> outer_dims;
  std::vector<int64_t> outer_strides;

  const float* Row(int64_t row) const {
    int64_t offset = 0;
    for (size_t d = outer_dims.size(); d-- > 0;) {
      offset += row % outer_dims[d] * outer_strides[d];
      row /= outer_dims[d];
    }
    return data + offset;
  }
};

// `scale` broadcast to X of shape `xs`, normalized from `axis` on: the tensor itself when it is
// one row in order, else a copy of shape scale_dims[:axis] + xs[axis:].
Result<ScaleRows> ScaleForRows(const Tensor& scale, const std::vector<int64_t>& xs, size_t axis) {
  EPCTX_RETURN_IF_ERROR(ExpectDtype(scale, DataType::kFloat32, "scale"));
  const std::vector<int64_t>& ss = scale.shape();
  const size_t rank = xs.size();
  if (ss.size() > rank) {
    return EPCTX_ERROR(kInvalidArgument, "input scale has rank {}, more than X's {}", ss.size(),
                       rank);
  }
  std::vector<int64_t> aligned(rank, 1);  // the scale's dims right-aligned with X's
  std::copy(ss.begin(), ss.end(), aligned.begin() + static_cast<std::ptrdiff_t>(rank - ss.size()));
  bool per_row = false;
  for (size_t d = 0; d < rank; ++d) {
    if (aligned[d] != 1 && aligned[d] != xs[d]) {
      return EPCTX_ERROR(kInvalidArgument,
                         "input scale has shape {}, which does not broadcast to X's shape {}",
                         ShapeToString(ss), ShapeToString(xs));
    }
    per_row = per_row || (d < axis && aligned[d] != 1);
  }
  const std::vector<int64_t> inner(xs.begin() + static_cast<std::ptrdiff_t>(axis), xs.end());
  ScaleRows rows;
  if (!per_row) {
    EPCTX_ASSIGN_OR_RETURN(BroadcastRow row, BroadcastToRow(scale, inner, "scale"));
    rows.storage = std::move(row.storage);
    rows.data = rows.storage.empty() ? row.data : rows.storage.data();
    return rows;
  }
  // The copy's dims: the scale's before the axis, X's from it on.
  std::vector<int64_t> copy_dims(aligned.begin(),
                                 aligned.begin() + static_cast<std::ptrdiff_t>(axis));
  copy_dims.insert(copy_dims.end(), inner.begin(), inner.end());
  std::vector<int64_t> source_strides(rank, 0);
  for (size_t d = rank, stride = 1; d-- > 0;) {
    source_strides[d] = aligned[d] == 1 ? 0 : static_cast<int64_t>(stride);
    stride *= static_cast<size_t>(aligned[d]);
  }
  EPCTX_ASSIGN_OR_RETURN(const int64_t count, CheckedDimProduct(copy_dims));
  EPCTX_ASSIGN_OR_RETURN(const int64_t inner_count, CheckedDimProduct(inner));
  rows.storage.resize(static_cast<size_t>(count));
  const float* src = scale.data_as<float>();
  std::vector<int64_t> index(rank, 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += index[d] * source_strides[d];
    rows.storage[static_cast<size_t>(e)] = src[offset];
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < copy_dims[d]) break;
      index[d] = 0;
    }
  }
  rows.data = rows.storage.data();
  rows.outer_dims.assign(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(axis));
  rows.outer_strides.assign(axis, 0);
  for (size_t d = axis, stride = static_cast<size_t>(inner_count); d-- > 0;) {
    rows.outer_strides[d] = aligned[d] == 1 ? 0 : static_cast<int64_t>(stride);
    stride *= static_cast<size_t>(aligned[d]);
  }
  return rows;
}

class SimplifiedLayerNormKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<SimplifiedLayerNormKernel>(new SimplifiedLayerNormKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->axis_, node.attrs->GetInt("axis", -1));
    EPCTX_ASSIGN_OR_RETURN(kernel->epsilon_, node.attrs->GetFloat("epsilon", 1e-5f));
    kernel->inv_std_output_ = OutputPresent(node, 1);
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "scale"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* scale, RequiredInput(ctx, 1, "scale"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    const std::vector<int64_t>& xs = x->shape();
    const auto rank = static_cast<int64_t>(xs.size());
    EPCTX_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_, rank, "axis"));
    const auto a = static_cast<size_t>(axis);
    EPCTX_ASSIGN_OR_RETURN(const int64_t len, CheckedDimProduct(xs, a, xs.size()));
    if (len < 1) {
      return EPCTX_ERROR(kInvalidArgument,
                         "X has shape {}, whose dims from axis {} on hold no element",
                         ShapeToString(xs), axis);
    }
    EPCTX_ASSIGN_OR_RETURN(ScaleRows s, ScaleForRows(*scale, xs, a));
    EPCTX_ASSIGN_OR_RETURN(const int64_t rows, CheckedDimProduct(xs, 0, a));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, xs));
    float* inv_std_out = nullptr;
    if (inv_std_output_) {
      std::vector<int64_t> stat_shape(xs.begin(), xs.begin() + axis);
      stat_shape.resize(xs.size(), 1);
      EPCTX_ASSIGN_OR_RETURN(Tensor * v, ctx.AllocateOutput(1, DataType::kFloat32, stat_shape));
      inv_std_out = v->mutable_data_as<float>();
    }
    const float* xp = x->data_as<float>();
    float* yp = y->mutable_data_as<float>();
    const int nt = ThreadsFor(ctx.num_threads(), x->element_count());
    ParallelForRanges(nt, rows, 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const float inv_rms = InverseRms(xp + r * len, len, epsilon_);
        ScaleRow(xp + r * len, inv_rms, s.Row(r), yp + r * len, len);
        if (inv_std_out != nullptr) inv_std_out[r] = inv_rms;
      }
    });
    return Status::Ok();
  }

 private:
  SimplifiedLayerNormKernel() = default;
  int64_t axis_ = -1;
  float epsilon_ = 1e-5f;
  bool inv_std_output_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateSimplifiedLayerNormalization(const NodeInfo& node) {
  return SimplifiedLayerNormKernel::Create(node);
}

}  // namespace epctx::exec::kernels
