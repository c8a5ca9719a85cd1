// Slice: starts/ends/axes are attributes in opset 1; from opset 10 they are inputs, with steps.
// Bounds are clamped as ONNX specifies, so INT64_MAX / INT64_MIN mean "to the end" in either
// direction; a negative step walks backwards through the input. Any element type, strings too.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/indexing/index_input.h"
#include "exec/kernels/indexing/strided_copy.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// Clamps one axis's bounds; sets its first index and element count.
void ClampAxis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t* first,
               int64_t* count) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  // |step| as unsigned so that INT64_MIN has a magnitude.
  const uint64_t mag =
      step < 0 ? uint64_t{0} - static_cast<uint64_t>(step) : static_cast<uint64_t>(step);
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    *count =
        end > start ? 1 + static_cast<int64_t>(static_cast<uint64_t>(end - start - 1) / mag) : 0;
  } else {
    // A start below the dim selects the first element, as the spec says and ONNX Runtime does
    // (numpy's slicing would select nothing); on an empty dim nothing is selected.
    start = dim == 0 ? -1 : std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    *count =
        start > end ? 1 + static_cast<int64_t>(static_cast<uint64_t>(start - end - 1) / mag) : 0;
  }
  *first = start;
}

class SliceKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool bounds_are_inputs) {
    auto kernel = std::unique_ptr<SliceKernel>(new SliceKernel());
    EPCTX_RETURN_IF_ERROR(ExpectStaticMovable(node, 0, "data"));
    kernel->bounds_are_inputs_ = bounds_are_inputs;
    if (!bounds_are_inputs) {
      EPCTX_ASSIGN_OR_RETURN(const AttributeValue* starts,
                             node.attrs->Require("starts", AttrType::kInts));
      EPCTX_ASSIGN_OR_RETURN(const AttributeValue* ends,
                             node.attrs->Require("ends", AttrType::kInts));
      kernel->starts_.assign(starts->ints.begin(), starts->ints.end());
      kernel->ends_.assign(ends->ints.begin(), ends->ints.end());
      EPCTX_ASSIGN_OR_RETURN(kernel->axes_, node.attrs->GetInts("axes"));
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "data"));
    EPCTX_RETURN_IF_ERROR(ExpectMovable(x->dtype(), "data"));
    std::vector<int64_t> starts = starts_, ends = ends_, axes = axes_, steps;
    if (bounds_are_inputs_) {
      EPCTX_ASSIGN_OR_RETURN(const Tensor* s, RequiredInput(ctx, 1, "starts"));
      EPCTX_ASSIGN_OR_RETURN(const Tensor* e, RequiredInput(ctx, 2, "ends"));
      EPCTX_ASSIGN_OR_RETURN(starts, ReadIndexVector(*s, "starts"));
      EPCTX_ASSIGN_OR_RETURN(ends, ReadIndexVector(*e, "ends"));
      if (ctx.input_count() > 3 && ctx.input(3) != nullptr) {
        EPCTX_ASSIGN_OR_RETURN(axes, ReadIndexVector(*ctx.input(3), "axes"));
      }
      if (ctx.input_count() > 4 && ctx.input(4) != nullptr) {
        EPCTX_ASSIGN_OR_RETURN(steps, ReadIndexVector(*ctx.input(4), "steps"));
      }
    }
    const size_t n = starts.size();
    if (ends.size() != n) {
      return EPCTX_ERROR(kInvalidArgument, "starts has {} elements but ends has {}", n,
                         ends.size());
    }
    if (axes.empty()) {
      for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (steps.empty()) steps.assign(n, 1);
    if (axes.size() != n || steps.size() != n) {
      return EPCTX_ERROR(kInvalidArgument,
                         "starts has {} elements but axes has {} and steps has {}", n, axes.size(),
                         steps.size());
    }
    const std::vector<int64_t>& shape = x->shape();
    const int64_t rank = static_cast<int64_t>(shape.size());
    std::vector<int64_t> first(shape.size(), 0), step(shape.size(), 1), out_shape = shape;
    std::vector<bool> seen(shape.size(), false);
    for (size_t i = 0; i < n; ++i) {
      EPCTX_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axes[i], rank, "axis"));
      const size_t a = static_cast<size_t>(axis);
      if (seen[a]) {
        return EPCTX_ERROR(kInvalidArgument, "axis {} appears more than once in axes", axes[i]);
      }
      seen[a] = true;
      if (steps[i] == 0) return EPCTX_ERROR(kInvalidArgument, "step for axis {} is 0", axes[i]);
      step[a] = steps[i];
      ClampAxis(shape[a], starts[i], ends[i], steps[i], &first[a], &out_shape[a]);
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), out_shape));
    if (y->element_count() == 0) return Status::Ok();
    EPCTX_ASSIGN_OR_RETURN(const std::vector<int64_t> in_strides, ContiguousStrides(shape));
    std::vector<int64_t> src_strides(shape.size());
    int64_t offset = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      // A dim of one element never moves; its step may be huge (INT64_MAX) and must not be
      // multiplied.
      src_strides[d] = out_shape[d] == 1 ? 0 : in_strides[d] * step[d];
      offset += first[d] * in_strides[d];
    }
    EPCTX_ASSIGN_OR_RETURN(const std::vector<int64_t> out_strides, ContiguousStrides(out_shape));
    CopyStridedTensor(out_shape, *x, offset, src_strides, *y, out_strides, ctx.num_threads());
    return Status::Ok();
  }

 private:
  SliceKernel() = default;
  bool bounds_are_inputs_ = true;
  std::vector<int64_t> starts_, ends_, axes_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateSlice(const NodeInfo& node) {
  return SliceKernel::Create(node, node.opset >= 10);
}

}  // namespace epctx::exec::kernels
