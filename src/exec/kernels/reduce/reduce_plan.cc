#include "exec/kernels/reduce/reduce_plan.h"

#include <algorithm>

#include "exec/kernels/common/shape.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {

Result<ReducePlan> PlanReduce(std::span<const int64_t> shape, std::span<const int64_t> axes,
                              bool keepdims, bool noop_with_empty_axes) {
  ReducePlan plan;
  const int64_t rank = static_cast<int64_t>(shape.size());
  // Empty axes with noop_with_empty_axes reduce nothing: each element is reduced alone (ONNX
  // Runtime's and ONNX's reference: ReduceL1 gives |x|, ReduceSumSquare x * x).
  plan.noop = axes.empty() && noop_with_empty_axes;
  std::vector<bool> reduced(shape.size(), axes.empty() && !plan.noop);
  for (int64_t a : axes) {
    EPCTX_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a, rank, "axis"));
    if (reduced[static_cast<size_t>(axis)]) {
      return EPCTX_ERROR(kInvalidArgument, "axis {} appears more than once in axes", a);
    }
    reduced[static_cast<size_t>(axis)] = true;
  }
  // An empty input's other dims may multiply beyond int64 ([0, 2^32, 2^32]): every product
  // here is checked (CheckedDimProduct), and one that overflows is an error, not a wrapped count.
  std::vector<int64_t> reduced_dims, kept_dims;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (reduced[d]) {
      reduced_dims.push_back(shape[d]);
      if (keepdims) plan.output_shape.push_back(1);
    } else {
      kept_dims.push_back(shape[d]);
      plan.output_shape.push_back(shape[d]);
    }
  }
  EPCTX_ASSIGN_OR_RETURN(plan.reduce_count, CheckedDimProduct(reduced_dims));
  EPCTX_ASSIGN_OR_RETURN(plan.output_count, CheckedDimProduct(kept_dims));
  // Dims of extent 1 are dropped, and neighbours of the same kind merge into one dim.
  size_t end = shape.size();  // the last merged dim covers the input dims [d, end)
  for (size_t d = shape.size(); d-- > 0;) {
    const int64_t extent = shape[d];
    if (extent == 1) continue;
    if (!plan.dims.empty() && plan.reduced.back() == reduced[d]) {
      EPCTX_ASSIGN_OR_RETURN(plan.dims.back(), CheckedDimProduct(shape.subspan(d, end - d)));
    } else {
      EPCTX_ASSIGN_OR_RETURN(const int64_t stride, CheckedDimProduct(shape.subspan(d + 1)));
      plan.dims.push_back(extent);
      plan.strides.push_back(stride);
      plan.reduced.push_back(reduced[d]);
      end = d + 1;
    }
  }
  if (plan.dims.empty()) {
    plan.dims.push_back(1);
    plan.strides.push_back(1);
    plan.reduced.push_back(false);
  }
  std::reverse(plan.dims.begin(), plan.dims.end());
  std::reverse(plan.strides.begin(), plan.strides.end());
  std::vector<bool> order(plan.reduced.rbegin(), plan.reduced.rend());
  plan.reduced = std::move(order);
  return plan;
}

}  // namespace epctx::exec::kernels
