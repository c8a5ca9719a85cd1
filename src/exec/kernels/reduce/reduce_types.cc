#include "exec/kernels/reduce/reduce_types.h"

#include "exec/kernels/common/shape.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {

bool IsReduceType(DataType type) {
  switch (type) {
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kInt8:
    case DataType::kUint8:
      return true;
    default:
      return false;
  }
}

Status ExpectSupportedType(DataType type, bool (*supported)(DataType), std::string_view op) {
  if (supported(type)) return Status::Ok();
  return EPCTX_ERROR(kUnsupported, "{} does not support input type {}", op, DataTypeName(type));
}

Status ExpectStaticSupportedType(const NodeInfo& node, size_t index, bool (*supported)(DataType),
                                 std::string_view op) {
  if (!InputPresent(node, index) || node.inputs[index].dtype == DataType::kUndefined) {
    return Status::Ok();
  }
  return ExpectSupportedType(node.inputs[index].dtype, supported, op);
}

}  // namespace epctx::exec::kernels
