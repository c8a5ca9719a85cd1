#include "exec/kernels/indexing/index_input.h"

#include "exec/kernels/common/shape.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {

Result<std::vector<int64_t>> ReadIndexTensor(const Tensor& t, std::string_view name) {
  const size_t n = static_cast<size_t>(t.element_count());
  if (t.dtype() == DataType::kInt64) {
    const int64_t* p = t.data_as<int64_t>();
    return std::vector<int64_t>(p, p + n);
  }
  if (t.dtype() == DataType::kInt32) {
    const int32_t* p = t.data_as<int32_t>();
    return std::vector<int64_t>(p, p + n);
  }
  return EPCTX_ERROR(kUnsupported, "input {} has type {}, expected int32 or int64", name,
                     DataTypeName(t.dtype()));
}

Status NormalizeIndex(int64_t& index, int64_t extent, std::string_view name) {
  if (index < -extent || index >= extent) {
    return EPCTX_ERROR(kInvalidArgument, "{} index {} is out of range for a dim of {}", name, index,
                       extent);
  }
  if (index < 0) index += extent;
  return Status::Ok();
}

Status ExpectFitsExcept(std::span<const int64_t> inner, std::string_view inner_name,
                        std::span<const int64_t> outer, std::string_view outer_name, size_t axis) {
  bool fits = inner.size() == outer.size();
  for (size_t d = 0; fits && d < inner.size(); ++d) fits = d == axis || inner[d] <= outer[d];
  if (!fits) {
    return EPCTX_ERROR(kInvalidArgument, "{} has shape {}, which does not fit {}'s {}", inner_name,
                       ShapeToString({inner.begin(), inner.end()}), outer_name,
                       ShapeToString({outer.begin(), outer.end()}));
  }
  return Status::Ok();
}

Status ExpectStaticCopyable(const NodeInfo& node, size_t index, std::string_view name) {
  if (!InputPresent(node, index) || node.inputs[index].dtype == DataType::kUndefined) {
    return Status::Ok();
  }
  return CopyableElementSize(node.inputs[index].dtype, name).status();
}

Status ExpectStaticMovable(const NodeInfo& node, size_t index, std::string_view name) {
  if (!InputPresent(node, index) || node.inputs[index].dtype == DataType::kUndefined) {
    return Status::Ok();
  }
  return ExpectMovable(node.inputs[index].dtype, name);
}

}  // namespace epctx::exec::kernels
