// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum,
// ReduceLogSumExp and ReduceSumSquare. Axes are an attribute until the opset that moved them to
// an optional input (13 for ReduceSum, 18 for the others).
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "exec/kernels/common/copy.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/reduce/reduce_engine.h"
#include "exec/kernels/reduce/reduce_functors.h"
#include "exec/kernels/reduce/reduce_types.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// L2, LogSum and LogSumExp take a root or a log: float types only.
bool IsFloatType(DataType type) {
  return type == DataType::kFloat32 || type == DataType::kFloat64;
}

bool NeedsFloat(ReduceKind kind) {
  return kind == ReduceKind::kL2 || kind == ReduceKind::kLogSum || kind == ReduceKind::kLogSumExp;
}

template <typename T>
Status ReduceTyped(ReduceKind kind, const std::string& op, const ReducePlan& plan, const Tensor& x,
                   Tensor& y, int threads) {
  namespace ops = reduce_ops;
  const T* in = x.data_as<T>();
  T* out = y.mutable_data_as<T>();
  switch (kind) {
    case ReduceKind::kSum:
      Reduce<ops::Sum<T>>(plan, in, out, nullptr, threads);
      return Status::Ok();
    case ReduceKind::kMean:
      Reduce<ops::Mean<T>>(plan, in, out, nullptr, threads);
      return Status::Ok();
    case ReduceKind::kMax:
      Reduce<ops::Max<T>>(plan, in, out, nullptr, threads);
      return Status::Ok();
    case ReduceKind::kMin:
      Reduce<ops::Min<T>>(plan, in, out, nullptr, threads);
      return Status::Ok();
    case ReduceKind::kProd:
      Reduce<ops::Prod<T>>(plan, in, out, nullptr, threads);
      return Status::Ok();
    case ReduceKind::kL1:
      Reduce<ops::L1<T>>(plan, in, out, nullptr, threads);
      return Status::Ok();
    case ReduceKind::kSumSquare:
      Reduce<ops::SumSquare<T>>(plan, in, out, nullptr, threads);
      return Status::Ok();
    default:
      break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    switch (kind) {
      case ReduceKind::kL2:
        Reduce<ops::L2<T>>(plan, in, out, nullptr, threads);
        return Status::Ok();
      case ReduceKind::kLogSum:
        Reduce<ops::LogSum<T>>(plan, in, out, nullptr, threads);
        return Status::Ok();
      case ReduceKind::kLogSumExp: {
        std::vector<T> shift(static_cast<size_t>(plan.output_count));
        Reduce<ops::Max<T>>(plan, in, shift.data(), nullptr, threads);
        // All -inf (or an empty reduction) would give inf - inf; any finite shift is exact.
        for (T& s : shift) {
          if (!std::isfinite(s)) s = T(0);
        }
        Reduce<ops::LogSumExp<T>>(plan, in, out, shift.data(), threads);
        return Status::Ok();
      }
      default:
        break;
    }
  }
  return EPCTX_ERROR(kUnsupported, "{} does not support input type {}", op,
                     DataTypeName(x.dtype()));
}

class ReduceKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, ReduceKind kind,
                                                bool axes_input) {
    auto kernel = std::unique_ptr<ReduceKernel>(new ReduceKernel());
    kernel->kind_ = kind;
    kernel->op_ = std::string(node.op_type);
    kernel->axes_input_ = axes_input;
    kernel->supported_ = NeedsFloat(kind) ? &IsFloatType : &IsReduceType;
    EPCTX_RETURN_IF_ERROR(ExpectStaticSupportedType(node, 0, kernel->supported_, node.op_type));
    EPCTX_ASSIGN_OR_RETURN(int64_t keepdims, node.attrs->GetInt("keepdims", 1));
    EPCTX_ASSIGN_OR_RETURN(int64_t noop, node.attrs->GetInt("noop_with_empty_axes", 0));
    kernel->keepdims_ = keepdims != 0;
    kernel->noop_with_empty_axes_ = noop != 0;
    if (!axes_input) {
      EPCTX_ASSIGN_OR_RETURN(kernel->axes_, node.attrs->GetInts("axes"));
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "data"));
    std::vector<int64_t> axes = axes_;
    if (axes_input_ && ctx.input_count() > 1 && ctx.input(1) != nullptr) {
      EPCTX_ASSIGN_OR_RETURN(axes, ReadIndexVector(*ctx.input(1), "axes"));
    }
    EPCTX_ASSIGN_OR_RETURN(ReducePlan plan,
                           PlanReduce(x->shape(), axes, keepdims_, noop_with_empty_axes_));
    if (plan.noop && kind_ != ReduceKind::kL1 && kind_ != ReduceKind::kL2 &&
        kind_ != ReduceKind::kLogSum && kind_ != ReduceKind::kSumSquare) {
      return CopyToOutput(ctx, 0, *x, x->shape());
    }
    const DataType dtype = x->dtype();
    EPCTX_RETURN_IF_ERROR(ExpectSupportedType(dtype, supported_, op_));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, dtype, plan.output_shape));
    const int nt = ctx.num_threads();
    switch (dtype) {
      case DataType::kFloat32:
        return ReduceTyped<float>(kind_, op_, plan, *x, *y, nt);
      case DataType::kFloat64:
        return ReduceTyped<double>(kind_, op_, plan, *x, *y, nt);
      case DataType::kInt32:
        return ReduceTyped<int32_t>(kind_, op_, plan, *x, *y, nt);
      case DataType::kInt64:
        return ReduceTyped<int64_t>(kind_, op_, plan, *x, *y, nt);
      case DataType::kInt8:
        return ReduceTyped<int8_t>(kind_, op_, plan, *x, *y, nt);
      default:
        return ReduceTyped<uint8_t>(kind_, op_, plan, *x, *y, nt);
    }
  }

 private:
  ReduceKernel() = default;
  ReduceKind kind_ = ReduceKind::kSum;
  std::string op_;
  bool (*supported_)(DataType) = &IsReduceType;
  bool axes_input_ = false;
  bool keepdims_ = true;
  bool noop_with_empty_axes_ = false;
  std::vector<int64_t> axes_;
};

}  // namespace

// All ten ops, told apart by their type. The axes became an input in opset 13 for ReduceSum, in 18
// for the others.
Result<std::unique_ptr<Kernel>> CreateReduce(const NodeInfo& node) {
  static constexpr std::pair<std::string_view, ReduceKind> kKinds[] = {
      {"ReduceSum", ReduceKind::kSum},
      {"ReduceMean", ReduceKind::kMean},
      {"ReduceMax", ReduceKind::kMax},
      {"ReduceMin", ReduceKind::kMin},
      {"ReduceProd", ReduceKind::kProd},
      {"ReduceL1", ReduceKind::kL1},
      {"ReduceL2", ReduceKind::kL2},
      {"ReduceLogSum", ReduceKind::kLogSum},
      {"ReduceLogSumExp", ReduceKind::kLogSumExp},
      {"ReduceSumSquare", ReduceKind::kSumSquare},
  };
  for (const auto& [op, kind] : kKinds) {
    if (op == node.op_type) {
      return ReduceKernel::Create(node, kind, node.opset >= (kind == ReduceKind::kSum ? 13 : 18));
    }
  }
  return EPCTX_ERROR(kInternal, "{} is not a reduction", node.op_type);
}

}  // namespace epctx::exec::kernels
