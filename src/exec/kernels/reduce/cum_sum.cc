// CumSum along an axis given as a scalar input, optionally exclusive (each output leaves out its
// own element) and reversed (sums run from the end).

#include <cstdint>
#include <memory>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/reduce/reduce_functors.h"
#include "exec/kernels/reduce/reduce_types.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// x and y viewed as [outer, extent, inner].
template <typename T>
void CumSumSlabs(const T* x, T* y, int64_t outer, int64_t extent, int64_t inner, bool exclusive,
                 bool reverse, int threads) {
  const int nt = ThreadsFor(threads, outer * extent * inner);
  ParallelFor(nt, outer, [&](int64_t o, int) {
    const T* in = x + o * extent * inner;
    T* out = y + o * extent * inner;
    for (int64_t s = 0; s < extent; ++s) {
      const int64_t r = reverse ? extent - 1 - s : s;
      T* row = out + r * inner;
      if (s == 0) {
        for (int64_t j = 0; j < inner; ++j) row[j] = exclusive ? T(0) : in[r * inner + j];
        continue;
      }
      const int64_t prev = reverse ? r + 1 : r - 1;
      const T* prev_out = out + prev * inner;
      const T* add = in + (exclusive ? prev : r) * inner;
      for (int64_t j = 0; j < inner; ++j) row[j] = reduce_ops::WrapAdd(prev_out[j], add[j]);
    }
  });
}

bool IsCumSumType(DataType type) {
  switch (type) {
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUint32:
    case DataType::kUint64:
      return true;
    default:
      return false;
  }
}

class CumSumKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<CumSumKernel>(new CumSumKernel());
    EPCTX_RETURN_IF_ERROR(ExpectStaticSupportedType(node, 0, &IsCumSumType, "CumSum"));
    EPCTX_ASSIGN_OR_RETURN(int64_t exclusive, node.attrs->GetInt("exclusive", 0));
    EPCTX_ASSIGN_OR_RETURN(int64_t reverse, node.attrs->GetInt("reverse", 0));
    kernel->exclusive_ = exclusive != 0;
    kernel->reverse_ = reverse != 0;
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "x"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* axis_t, RequiredInput(ctx, 1, "axis"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> axis_v, ReadIndexVector(*axis_t, "axis"));
    if (axis_v.size() != 1) {
      return EPCTX_ERROR(kInvalidArgument, "input axis has {} elements, expected 1", axis_v.size());
    }
    const std::vector<int64_t>& shape = x->shape();
    EPCTX_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(axis_v[0], static_cast<int64_t>(shape.size()), "axis"));
    const size_t a = static_cast<size_t>(axis);
    EPCTX_ASSIGN_OR_RETURN(const int64_t outer, CheckedDimProduct(shape, 0, a));
    const int64_t extent = shape[a];
    EPCTX_ASSIGN_OR_RETURN(const int64_t inner, CheckedDimProduct(shape, a + 1, shape.size()));
    const DataType dtype = x->dtype();
    EPCTX_RETURN_IF_ERROR(ExpectSupportedType(dtype, &IsCumSumType, "CumSum"));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, dtype, shape));
    if (y->element_count() == 0) return Status::Ok();
    const int nt = ctx.num_threads();
    switch (dtype) {
      case DataType::kFloat32:
        CumSumSlabs(x->data_as<float>(), y->mutable_data_as<float>(), outer, extent, inner,
                    exclusive_, reverse_, nt);
        break;
      case DataType::kFloat64:
        CumSumSlabs(x->data_as<double>(), y->mutable_data_as<double>(), outer, extent, inner,
                    exclusive_, reverse_, nt);
        break;
      case DataType::kInt32:
        CumSumSlabs(x->data_as<int32_t>(), y->mutable_data_as<int32_t>(), outer, extent, inner,
                    exclusive_, reverse_, nt);
        break;
      case DataType::kInt64:
        CumSumSlabs(x->data_as<int64_t>(), y->mutable_data_as<int64_t>(), outer, extent, inner,
                    exclusive_, reverse_, nt);
        break;
      case DataType::kUint32:
        CumSumSlabs(x->data_as<uint32_t>(), y->mutable_data_as<uint32_t>(), outer, extent, inner,
                    exclusive_, reverse_, nt);
        break;
      default:
        CumSumSlabs(x->data_as<uint64_t>(), y->mutable_data_as<uint64_t>(), outer, extent, inner,
                    exclusive_, reverse_, nt);
        break;
    }
    return Status::Ok();
  }

 private:
  CumSumKernel() = default;
  bool exclusive_ = false;
  bool reverse_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateCumSum(const NodeInfo& node) {
  return CumSumKernel::Create(node);
}

}  // namespace epctx::exec::kernels
