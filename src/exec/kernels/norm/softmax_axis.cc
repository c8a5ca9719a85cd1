#include "exec/kernels/norm/softmax_axis.h"

#include "exec/kernels/common/shape.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {

Result<AxisSplit> SplitAtSoftmaxAxis(const std::vector<int64_t>& shape, int64_t axis,
                                     bool single_axis) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  AxisSplit s;
  if (single_axis) {
    EPCTX_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(axis, rank, "axis"));
    const size_t ax = static_cast<size_t>(a);
    EPCTX_ASSIGN_OR_RETURN(s.outer, CheckedDimProduct(shape, 0, ax));
    s.len = shape[ax];
    EPCTX_ASSIGN_OR_RETURN(s.inner, CheckedDimProduct(shape, ax + 1, shape.size()));
    return s;
  }
  if (axis < -rank || axis > rank) {
    return EPCTX_ERROR(kInvalidArgument, "axis {} is out of range for rank {}", axis, rank);
  }
  const size_t ax = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  EPCTX_ASSIGN_OR_RETURN(s.outer, CheckedDimProduct(shape, 0, ax));
  EPCTX_ASSIGN_OR_RETURN(s.len, CheckedDimProduct(shape, ax, shape.size()));
  return s;
}

Status ExpectFloat32Or64(DataType type, std::string_view name) {
  if (type == DataType::kUndefined || type == DataType::kFloat32 || type == DataType::kFloat64) {
    return Status::Ok();
  }
  return EPCTX_ERROR(kUnsupported, "input {} has type {}, expected float32 or float64", name,
                     DataTypeName(type));
}

}  // namespace epctx::exec::kernels
