// ArgMax and ArgMin along one axis: int64 indices, the first extreme position unless
// select_last_index (opset 12) asks for the last one.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/reduce/reduce_types.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// `Better(v, best)`: v replaces the current best. Ties replace it only for the last index.
template <typename T, bool kMax, bool kLast>
bool Better(T v, T best) {
  if constexpr (kMax) {
    return kLast ? v >= best : v > best;
  } else {
    return kLast ? v <= best : v < best;
  }
}

// x viewed as [outer, extent, inner]; y is [outer, inner].
template <typename T, bool kMax, bool kLast>
void ArgReduce(const T* x, int64_t outer, int64_t extent, int64_t inner, int64_t* y, int threads) {
  const int nt = ThreadsFor(threads, outer * extent * inner);
  ParallelForRanges(nt, outer, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> best(static_cast<size_t>(inner));
    for (int64_t o = begin; o < end; ++o) {
      const T* slab = x + o * extent * inner;
      int64_t* out = y + o * inner;
      for (int64_t j = 0; j < inner; ++j) {
        best[static_cast<size_t>(j)] = slab[j];
        out[j] = 0;
      }
      for (int64_t r = 1; r < extent; ++r) {
        const T* row = slab + r * inner;
        for (int64_t j = 0; j < inner; ++j) {
          if (Better<T, kMax, kLast>(row[j], best[static_cast<size_t>(j)])) {
            best[static_cast<size_t>(j)] = row[j];
            out[j] = r;
          }
        }
      }
    }
  });
}

template <typename T>
void ArgReduceTyped(const Tensor& x, bool is_max, bool last, int64_t outer, int64_t extent,
                    int64_t inner, int64_t* y, int threads) {
  const T* in = x.data_as<T>();
  if (is_max) {
    if (last) {
      ArgReduce<T, true, true>(in, outer, extent, inner, y, threads);
    } else {
      ArgReduce<T, true, false>(in, outer, extent, inner, y, threads);
    }
  } else if (last) {
    ArgReduce<T, false, true>(in, outer, extent, inner, y, threads);
  } else {
    ArgReduce<T, false, false>(in, outer, extent, inner, y, threads);
  }
}

class ArgReduceKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool is_max) {
    auto kernel = std::unique_ptr<ArgReduceKernel>(new ArgReduceKernel());
    kernel->is_max_ = is_max;
    kernel->op_ = std::string(node.op_type);
    EPCTX_RETURN_IF_ERROR(ExpectStaticSupportedType(node, 0, &IsReduceType, node.op_type));
    EPCTX_ASSIGN_OR_RETURN(kernel->axis_, node.attrs->GetInt("axis", 0));
    EPCTX_ASSIGN_OR_RETURN(int64_t keepdims, node.attrs->GetInt("keepdims", 1));
    EPCTX_ASSIGN_OR_RETURN(int64_t last, node.attrs->GetInt("select_last_index", 0));
    kernel->keepdims_ = keepdims != 0;
    kernel->select_last_ = last != 0;
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "data"));
    const std::vector<int64_t>& shape = x->shape();
    EPCTX_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(axis_, static_cast<int64_t>(shape.size()), "axis"));
    const size_t a = static_cast<size_t>(axis);
    const int64_t extent = shape[a];
    EPCTX_ASSIGN_OR_RETURN(const int64_t outer, CheckedDimProduct(shape, 0, a));
    EPCTX_ASSIGN_OR_RETURN(const int64_t inner, CheckedDimProduct(shape, a + 1, shape.size()));
    if (extent == 0 && outer > 0 && inner > 0) {
      return EPCTX_ERROR(kInvalidArgument, "{} over axis {} of extent 0 has no result", op_, axis);
    }
    std::vector<int64_t> out_shape = shape;
    if (keepdims_) {
      out_shape[a] = 1;
    } else {
      out_shape.erase(out_shape.begin() + axis);
    }
    const DataType dtype = x->dtype();
    EPCTX_RETURN_IF_ERROR(ExpectSupportedType(dtype, &IsReduceType, op_));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kInt64, out_shape));
    if (y->element_count() == 0) return Status::Ok();
    int64_t* out = y->mutable_data_as<int64_t>();
    const int nt = ctx.num_threads();
    switch (dtype) {
      case DataType::kFloat32:
        ArgReduceTyped<float>(*x, is_max_, select_last_, outer, extent, inner, out, nt);
        break;
      case DataType::kFloat64:
        ArgReduceTyped<double>(*x, is_max_, select_last_, outer, extent, inner, out, nt);
        break;
      case DataType::kInt32:
        ArgReduceTyped<int32_t>(*x, is_max_, select_last_, outer, extent, inner, out, nt);
        break;
      case DataType::kInt64:
        ArgReduceTyped<int64_t>(*x, is_max_, select_last_, outer, extent, inner, out, nt);
        break;
      case DataType::kInt8:
        ArgReduceTyped<int8_t>(*x, is_max_, select_last_, outer, extent, inner, out, nt);
        break;
      default:
        ArgReduceTyped<uint8_t>(*x, is_max_, select_last_, outer, extent, inner, out, nt);
        break;
    }
    return Status::Ok();
  }

 private:
  ArgReduceKernel() = default;
  bool is_max_ = true;
  std::string op_;
  int64_t axis_ = 0;
  bool keepdims_ = true;
  bool select_last_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateArgMax(const NodeInfo& node) {
  return ArgReduceKernel::Create(node, true);
}

Result<std::unique_ptr<Kernel>> CreateArgMin(const NodeInfo& node) {
  return ArgReduceKernel::Create(node, false);
}

}  // namespace epctx::exec::kernels
