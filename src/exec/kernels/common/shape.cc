#include "exec/kernels/common/shape.h"

#include "util/status_macros.h"

namespace epctx::exec::kernels {

Result<int64_t> NormalizeAxis(int64_t axis, int64_t rank, std::string_view what) {
  if (axis < -rank || axis >= rank) {
    return EPCTX_ERROR(kInvalidArgument, "{} {} is out of range for rank {}", what, axis, rank);
  }
  return axis < 0 ? axis + rank : axis;
}

Result<const Tensor*> RequiredInput(const KernelContext& ctx, size_t index, std::string_view name) {
  const Tensor* t = ctx.input(index);
  if (t == nullptr) return EPCTX_ERROR(kInvalidArgument, "required input {} is missing", name);
  return t;
}

bool InputPresent(const NodeInfo& node, size_t index) {
  return index < node.inputs.size() && node.inputs[index].present;
}

bool OutputPresent(const NodeInfo& node, size_t index) {
  return index < node.outputs.size() && node.outputs[index].present;
}

Status ExpectDtype(const Tensor& t, DataType want, std::string_view name) {
  if (t.dtype() != want) {
    return EPCTX_ERROR(kUnsupported, "input {} has type {}, expected {}", name,
                       DataTypeName(t.dtype()), DataTypeName(want));
  }
  return Status::Ok();
}

Status ExpectRank(const Tensor& t, size_t rank, std::string_view name) {
  if (t.shape().size() != rank) {
    return EPCTX_ERROR(kInvalidArgument, "input {} has rank {}, expected {}", name,
                       t.shape().size(), rank);
  }
  return Status::Ok();
}

Status ExpectStaticDtype(const NodeInfo& node, size_t index, DataType want, std::string_view name) {
  if (!InputPresent(node, index)) return Status::Ok();
  DataType have = node.inputs[index].dtype;
  if (have != DataType::kUndefined && have != want) {
    return EPCTX_ERROR(kUnsupported, "input {} has type {}, expected {}", name, DataTypeName(have),
                       DataTypeName(want));
  }
  return Status::Ok();
}

Status ExpectStaticRank(const NodeInfo& node, size_t index, size_t rank, std::string_view name) {
  if (!InputPresent(node, index) || !node.inputs[index].shape_known) return Status::Ok();
  if (node.inputs[index].shape.size() != rank) {
    return EPCTX_ERROR(kInvalidArgument, "input {} has rank {}, expected {}", name,
                       node.inputs[index].shape.size(), rank);
  }
  return Status::Ok();
}

const std::vector<int64_t>* StaticShape(const NodeInfo& node, size_t index) {
  if (!InputPresent(node, index) || !node.inputs[index].shape_known) return nullptr;
  return &node.inputs[index].shape;
}

Result<std::vector<int64_t>> ReadIndexVector(const Tensor& t, std::string_view name) {
  if (t.shape().size() > 1) {
    return EPCTX_ERROR(kInvalidArgument, "input {} has rank {}, expected 1", name,
                       t.shape().size());
  }
  std::vector<int64_t> values(static_cast<size_t>(t.element_count()));
  if (t.dtype() == DataType::kInt64) {
    const int64_t* p = t.data_as<int64_t>();
    values.assign(p, p + t.element_count());
  } else if (t.dtype() == DataType::kInt32) {
    const int32_t* p = t.data_as<int32_t>();
    values.assign(p, p + t.element_count());
  } else {
    return EPCTX_ERROR(kUnsupported, "input {} has type {}, expected int64", name,
                       DataTypeName(t.dtype()));
  }
  return values;
}

Result<size_t> CopyableElementSize(DataType type, std::string_view name) {
  size_t size = DataTypeSize(type);
  if (size == 0) {
    return EPCTX_ERROR(kUnsupported, "input {} has type {}, which has no fixed element size", name,
                       DataTypeName(type));
  }
  return size;
}

Status ExpectMovable(DataType type, std::string_view name) {
  if (type == DataType::kString) return Status::Ok();
  return CopyableElementSize(type, name).status();
}

}  // namespace epctx::exec::kernels
