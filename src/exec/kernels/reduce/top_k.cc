// TopK: the k largest (or smallest) elements along an axis with their int64 indices. Equal
// values keep the smaller index first, as ONNX specifies; NaN orders above every number so that
// the comparison stays a strict weak order.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/reduce/reduce_types.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

template <typename T>
bool Above(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return a > b;
}

// x viewed as [outer, extent, inner]; values and indices as [outer, k, inner].
template <typename T>
void TopKSlices(const T* x, int64_t outer, int64_t extent, int64_t inner, int64_t k, bool largest,
                T* values, int64_t* indices, int threads) {
  const int64_t slices = outer * inner;
  const int nt = ThreadsFor(threads, slices * extent);
  ParallelForRanges(nt, slices, 1, [&](int64_t begin, int64_t end) {
    std::vector<std::pair<T, int64_t>> items(static_cast<size_t>(extent));
    auto first = [largest](const std::pair<T, int64_t>& a, const std::pair<T, int64_t>& b) {
      if (largest ? Above(a.first, b.first) : Above(b.first, a.first)) return true;
      if (largest ? Above(b.first, a.first) : Above(a.first, b.first)) return false;
      return a.second < b.second;
    };
    for (int64_t s = begin; s < end; ++s) {
      const int64_t o = s / inner;
      const int64_t j = s % inner;
      const T* in = x + o * extent * inner + j;
      for (int64_t r = 0; r < extent; ++r) {
        items[static_cast<size_t>(r)] = {in[r * inner], r};
      }
      std::partial_sort(items.begin(), items.begin() + k, items.end(), first);
      T* v = values + o * k * inner + j;
      int64_t* idx = indices + o * k * inner + j;
      for (int64_t r = 0; r < k; ++r) {
        v[r * inner] = items[static_cast<size_t>(r)].first;
        idx[r * inner] = items[static_cast<size_t>(r)].second;
      }
    }
  });
}

class TopKKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<TopKKernel>(new TopKKernel());
    EPCTX_RETURN_IF_ERROR(ExpectStaticSupportedType(node, 0, &IsReduceType, "TopK"));
    EPCTX_ASSIGN_OR_RETURN(kernel->axis_, node.attrs->GetInt("axis", -1));
    if (node.opset < 10) {
      EPCTX_ASSIGN_OR_RETURN(const AttributeValue* k, node.attrs->Require("k", AttrType::kInt));
      kernel->k_attr_ = k->i;
    }
    if (node.opset >= 11) {
      EPCTX_ASSIGN_OR_RETURN(int64_t largest, node.attrs->GetInt("largest", 1));
      kernel->largest_ = largest != 0;
    }
    kernel->k_from_input_ = node.opset >= 10;
    kernel->want_values_ = OutputPresent(node, 0);
    kernel->want_indices_ = OutputPresent(node, 1);
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    int64_t k = k_attr_;
    if (k_from_input_) {
      EPCTX_ASSIGN_OR_RETURN(const Tensor* kt, RequiredInput(ctx, 1, "K"));
      EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> kv, ReadIndexVector(*kt, "K"));
      if (kv.size() != 1) {
        return EPCTX_ERROR(kInvalidArgument, "input K has {} elements, expected 1", kv.size());
      }
      k = kv[0];
    }
    const std::vector<int64_t>& shape = x->shape();
    EPCTX_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(axis_, static_cast<int64_t>(shape.size()), "axis"));
    const size_t a = static_cast<size_t>(axis);
    const int64_t extent = shape[a];
    if (k < 0 || k > extent) {
      return EPCTX_ERROR(kInvalidArgument, "k {} is out of range for axis {} of extent {}", k, axis,
                         extent);
    }
    const DataType dtype = x->dtype();
    EPCTX_RETURN_IF_ERROR(ExpectSupportedType(dtype, &IsReduceType, "TopK"));
    std::vector<int64_t> out_shape = shape;
    out_shape[a] = k;
    EPCTX_ASSIGN_OR_RETURN(const int64_t outer, CheckedDimProduct(shape, 0, a));
    EPCTX_ASSIGN_OR_RETURN(const int64_t inner, CheckedDimProduct(shape, a + 1, shape.size()));
    // Omitted outputs still need somewhere to go; a scratch tensor stands in for them.
    Tensor values_scratch, indices_scratch;
    Tensor* values = &values_scratch;
    Tensor* indices = &indices_scratch;
    if (want_values_) {
      EPCTX_ASSIGN_OR_RETURN(values, ctx.AllocateOutput(0, dtype, out_shape));
    } else {
      EPCTX_ASSIGN_OR_RETURN(values_scratch, Tensor::Allocate(dtype, out_shape));
    }
    if (want_indices_) {
      EPCTX_ASSIGN_OR_RETURN(indices, ctx.AllocateOutput(1, DataType::kInt64, out_shape));
    } else {
      EPCTX_ASSIGN_OR_RETURN(indices_scratch, Tensor::Allocate(DataType::kInt64, out_shape));
    }
    if (values->element_count() == 0) return Status::Ok();
    int64_t* idx = indices->mutable_data_as<int64_t>();
    const int nt = ctx.num_threads();
    switch (dtype) {
      case DataType::kFloat32:
        TopKSlices(x->data_as<float>(), outer, extent, inner, k, largest_,
                   values->mutable_data_as<float>(), idx, nt);
        break;
      case DataType::kFloat64:
        TopKSlices(x->data_as<double>(), outer, extent, inner, k, largest_,
                   values->mutable_data_as<double>(), idx, nt);
        break;
      case DataType::kInt32:
        TopKSlices(x->data_as<int32_t>(), outer, extent, inner, k, largest_,
                   values->mutable_data_as<int32_t>(), idx, nt);
        break;
      case DataType::kInt64:
        TopKSlices(x->data_as<int64_t>(), outer, extent, inner, k, largest_,
                   values->mutable_data_as<int64_t>(), idx, nt);
        break;
      case DataType::kInt8:
        TopKSlices(x->data_as<int8_t>(), outer, extent, inner, k, largest_,
                   values->mutable_data_as<int8_t>(), idx, nt);
        break;
      default:
        TopKSlices(x->data_as<uint8_t>(), outer, extent, inner, k, largest_,
                   values->mutable_data_as<uint8_t>(), idx, nt);
        break;
    }
    return Status::Ok();
  }

 private:
  TopKKernel() = default;
  int64_t axis_ = -1;
  int64_t k_attr_ = 0;
  bool k_from_input_ = true;
  bool largest_ = true;
  bool want_values_ = true;
  bool want_indices_ = true;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateTopK(const NodeInfo& node) {
  return TopKKernel::Create(node);
}

}  // namespace epctx::exec::kernels
