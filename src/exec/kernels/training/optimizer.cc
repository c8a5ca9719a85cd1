// The input and output checks the training optimizers share (see optimizer.h).
#include "exec/kernels/training/optimizer.h"

#include <string>

namespace epctx::exec::kernels::training {
namespace {

bool IsFloatType(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat64;
}

// "X", "G", ... of tensor i (1-based in messages, as the operator text numbers X_1, X_2).
std::string TensorName(std::string_view list, size_t i) {
  return fmt::format("{}_{}", list, i + 1);
}

bool ShapesDiffer(const ValueDesc& a, const ValueDesc& b) {
  if (!a.shape_known || !b.shape_known) return false;
  if (a.shape.size() != b.shape.size()) return true;
  for (size_t d = 0; d < a.shape.size(); ++d) {
    if (a.shape[d] >= 0 && b.shape[d] >= 0 && a.shape[d] != b.shape[d]) return true;
  }
  return false;
}

std::string ListNames(std::span<const std::string_view> names) {
  std::string s;
  for (std::string_view n : names) s += fmt::format("{}{}...", s.empty() ? "" : ", ", n);
  return s;
}

}  // namespace

Result<size_t> CheckOptimizerNode(const NodeInfo& node, std::string_view op,
                                  std::span<const std::string_view> inputs,
                                  std::span<const std::string_view> outputs) {
  const size_t lists = inputs.size();
  if (node.inputs.size() < 2 + lists || (node.inputs.size() - 2) % lists != 0) {
    return EPCTX_ERROR(kInvalidArgument,
                       "{} takes R, T and {} lists of N tensors ({}), so 2 + {} * N inputs; the "
                       "node has {}",
                       op, lists, ListNames(inputs), lists, node.inputs.size());
  }
  const size_t n = (node.inputs.size() - 2) / lists;
  if (node.outputs.size() > outputs.size() * n) {
    return EPCTX_ERROR(kInvalidArgument,
                       "{} optimizes {} tensor(s), so it has at most {} outputs ({}); the node "
                       "has {}",
                       op, n, outputs.size() * n, ListNames(outputs), node.outputs.size());
  }
  for (size_t j = 0; j < node.inputs.size(); ++j) {
    if (!node.inputs[j].present) {
      return EPCTX_ERROR(kInvalidArgument, "{}: input {} is omitted; every input is required", op,
                         j);
    }
  }
  const DataType r = node.inputs[0].dtype;
  if (r != DataType::kUndefined && !IsFloatType(r)) {
    return EPCTX_ERROR(kInvalidArgument, "{}: R has type {}, expected float or double", op,
                       DataTypeName(r));
  }
  const DataType t = node.inputs[1].dtype;
  if (t != DataType::kUndefined && t != DataType::kInt64) {
    return EPCTX_ERROR(kInvalidArgument, "{}: T has type {}, expected int64", op, DataTypeName(t));
  }
  for (size_t i = 0; i < n; ++i) {
    const ValueDesc& x = node.inputs[2 + i];
    if (x.dtype != DataType::kUndefined && !IsFloatType(x.dtype)) {
      return EPCTX_ERROR(kInvalidArgument, "{}: {} has type {}, expected float or double", op,
                         TensorName(inputs[0], i), DataTypeName(x.dtype));
    }
    for (size_t k = 1; k < lists; ++k) {
      const ValueDesc& v = node.inputs[2 + k * n + i];
      if (v.dtype != DataType::kUndefined && x.dtype != DataType::kUndefined &&
          v.dtype != x.dtype) {
        return EPCTX_ERROR(kInvalidArgument, "{}: {} has type {}, but {} has type {}", op,
                           TensorName(inputs[k], i), DataTypeName(v.dtype),
                           TensorName(inputs[0], i), DataTypeName(x.dtype));
      }
      if (ShapesDiffer(v, x)) {
        return EPCTX_ERROR(kInvalidArgument, "{}: {} has shape {}, but {} has shape {}", op,
                           TensorName(inputs[k], i), ShapeToString(v.shape),
                           TensorName(inputs[0], i), ShapeToString(x.shape));
      }
    }
  }
  return n;
}

Result<double> ReadLearningRate(const KernelContext& ctx, std::string_view op) {
  const Tensor* r = ctx.input(0);
  if (r == nullptr) return EPCTX_ERROR(kInvalidArgument, "{}: input R is missing", op);
  if (r->element_count() != 1) {
    return EPCTX_ERROR(kInvalidArgument, "{}: R has shape {}, expected a scalar", op,
                       ShapeToString(r->shape()));
  }
  if (r->dtype() == DataType::kFloat32) return static_cast<double>(*r->data_as<float>());
  if (r->dtype() == DataType::kFloat64) return *r->data_as<double>();
  return EPCTX_ERROR(kInvalidArgument, "{}: R has type {}, expected float or double", op,
                     DataTypeName(r->dtype()));
}

Result<int64_t> ReadUpdateCount(const KernelContext& ctx, std::string_view op) {
  const Tensor* t = ctx.input(1);
  if (t == nullptr) return EPCTX_ERROR(kInvalidArgument, "{}: input T is missing", op);
  if (t->element_count() != 1) {
    return EPCTX_ERROR(kInvalidArgument, "{}: T has shape {}, expected a scalar", op,
                       ShapeToString(t->shape()));
  }
  if (t->dtype() != DataType::kInt64) {
    return EPCTX_ERROR(kInvalidArgument, "{}: T has type {}, expected int64", op,
                       DataTypeName(t->dtype()));
  }
  return *t->data_as<int64_t>();
}

Result<const Tensor*> OptimizedInput(const KernelContext& ctx, size_t index, const Tensor* x,
                                     std::string_view op, std::string_view name, size_t i) {
  const Tensor* v = ctx.input(index);
  if (v == nullptr) {
    return EPCTX_ERROR(kInvalidArgument, "{}: input {} is missing", op, TensorName(name, i));
  }
  if (x == nullptr) {
    if (!IsFloatType(v->dtype())) {
      return EPCTX_ERROR(kInvalidArgument, "{}: {} has type {}, expected float or double", op,
                         TensorName(name, i), DataTypeName(v->dtype()));
    }
    return v;
  }
  if (v->dtype() != x->dtype() || v->shape() != x->shape()) {
    return EPCTX_ERROR(kInvalidArgument, "{}: {} is {} {}, but X_{} is {} {}", op,
                       TensorName(name, i), DataTypeName(v->dtype()), ShapeToString(v->shape()),
                       i + 1, DataTypeName(x->dtype()), ShapeToString(x->shape()));
  }
  return v;
}

}  // namespace epctx::exec::kernels::training
