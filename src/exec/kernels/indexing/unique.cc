// Unique: the distinct elements (or, with `axis`, the distinct slices along it) in ascending
// order or in order of first occurrence, with the optional int64 outputs indices (first
// occurrence), inverse_indices (where each input slice went) and counts. Slices compare
// lexicographically, as numpy.unique does; NaN ranks above numbers and equals NaN.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <type_traits>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/indexing/index_input.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

template <typename T>
bool Less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(b)) return !std::isnan(a);
    if (std::isnan(a)) return false;
  }
  return a < b;
}

// The groups of equal slices: each slice's group, and each group's first slice, in the output
// order.
struct Grouping {
  std::vector<int64_t> first;    // per group: index of its first slice
  std::vector<int64_t> counts;   // per group
  std::vector<int64_t> inverse;  // per slice: its group
};

// x viewed as [outer, extent, inner]; slice i is x[:, i, :].
template <typename T>
Grouping GroupSlices(const T* x, int64_t outer, int64_t extent, int64_t inner, bool sorted) {
  auto at = [&](int64_t slice, int64_t k) {
    return x[(k / inner * extent + slice) * inner + k % inner];
  };
  const int64_t len = outer * inner;
  auto compare = [&](int64_t a, int64_t b) {  // -1, 0, 1
    for (int64_t k = 0; k < len; ++k) {
      const T va = at(a, k), vb = at(b, k);
      if (Less(va, vb)) return -1;
      if (Less(vb, va)) return 1;
    }
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(extent));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
  Grouping g;
  g.inverse.resize(static_cast<size_t>(extent));
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || compare(order[i - 1], order[i]) != 0) {
      g.first.push_back(order[i]);  // stable: the smallest index of its group
      g.counts.push_back(0);
    }
    g.inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(g.first.size()) - 1;
    ++g.counts.back();
  }
  if (!sorted) {
    // Renumber the groups by first occurrence.
    std::vector<int64_t> by_first(g.first.size());
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(),
              [&](int64_t a, int64_t b) { return g.first[a] < g.first[b]; });
    std::vector<int64_t> rank(by_first.size());
    for (size_t r = 0; r < by_first.size(); ++r) rank[static_cast<size_t>(by_first[r])] = r;
    Grouping re;
    for (int64_t old : by_first) {
      re.first.push_back(g.first[static_cast<size_t>(old)]);
      re.counts.push_back(g.counts[static_cast<size_t>(old)]);
    }
    for (int64_t grp : g.inverse) re.inverse.push_back(rank[static_cast<size_t>(grp)]);
    return re;
  }
  return g;
}

class UniqueKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<UniqueKernel>(new UniqueKernel());
    EPCTX_RETURN_IF_ERROR(ExpectStaticCopyable(node, 0, "X"));
    if (node.attrs->Has("axis")) {
      EPCTX_ASSIGN_OR_RETURN(int64_t axis, node.attrs->GetInt("axis", 0));
      kernel->axis_ = axis;
    }
    EPCTX_ASSIGN_OR_RETURN(int64_t sorted, node.attrs->GetInt("sorted", 1));
    kernel->sorted_ = sorted != 0;
    for (size_t i = 0; i < 4; ++i) kernel->present_[i] = OutputPresent(node, i);
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    std::vector<int64_t> shape = x->shape();
    if (!axis_) shape = {x->element_count()};
    size_t axis = 0;
    if (axis_) {
      EPCTX_ASSIGN_OR_RETURN(int64_t a,
                             NormalizeAxis(*axis_, static_cast<int64_t>(shape.size()), "axis"));
      axis = static_cast<size_t>(a);
    }
    EPCTX_ASSIGN_OR_RETURN(const int64_t outer, CheckedDimProduct(shape, 0, axis));
    const int64_t extent = shape[axis];
    EPCTX_ASSIGN_OR_RETURN(const int64_t inner, CheckedDimProduct(shape, axis + 1, shape.size()));
    Grouping g;
    switch (x->dtype()) {
      case DataType::kFloat32:
        g = GroupSlices(x->data_as<float>(), outer, extent, inner, sorted_);
        break;
      case DataType::kFloat64:
        g = GroupSlices(x->data_as<double>(), outer, extent, inner, sorted_);
        break;
      case DataType::kInt32:
        g = GroupSlices(x->data_as<int32_t>(), outer, extent, inner, sorted_);
        break;
      case DataType::kInt64:
        g = GroupSlices(x->data_as<int64_t>(), outer, extent, inner, sorted_);
        break;
      case DataType::kInt8:
        g = GroupSlices(x->data_as<int8_t>(), outer, extent, inner, sorted_);
        break;
      case DataType::kUint8:
      case DataType::kBool:
        g = GroupSlices(x->data_as<uint8_t>(), outer, extent, inner, sorted_);
        break;
      default:
        return EPCTX_ERROR(kUnsupported, "Unique does not support type {}",
                           DataTypeName(x->dtype()));
    }
    const int64_t groups = static_cast<int64_t>(g.first.size());
    if (present_[0]) {
      std::vector<int64_t> out_shape = shape;
      out_shape[axis] = groups;
      EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), out_shape));
      const size_t element = DataTypeSize(x->dtype());
      const size_t block = static_cast<size_t>(inner) * element;
      const auto* src = static_cast<const std::byte*>(x->data());
      auto* dst = static_cast<std::byte*>(y->mutable_data());
      for (int64_t o = 0; o < outer && block > 0; ++o) {
        for (int64_t first : g.first) {
          std::memcpy(dst, src + static_cast<size_t>(o * extent + first) * block, block);
          dst += block;
        }
      }
    }
    EPCTX_RETURN_IF_ERROR(WriteInt64s(ctx, 1, g.first));
    EPCTX_RETURN_IF_ERROR(WriteInt64s(ctx, 2, g.inverse));
    return WriteInt64s(ctx, 3, g.counts);
  }

 private:
  UniqueKernel() = default;

  Status WriteInt64s(KernelContext& ctx, size_t index, const std::vector<int64_t>& v) const {
    if (!present_[index]) return Status::Ok();
    EPCTX_ASSIGN_OR_RETURN(
        Tensor * t, ctx.AllocateOutput(index, DataType::kInt64, {static_cast<int64_t>(v.size())}));
    if (!v.empty()) std::memcpy(t->mutable_data(), v.data(), v.size() * sizeof(int64_t));
    return Status::Ok();
  }

  std::optional<int64_t> axis_;
  bool sorted_ = true;
  bool present_[4] = {true, true, true, true};
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateUnique(const NodeInfo& node) {
  return UniqueKernel::Create(node);
}

}  // namespace epctx::exec::kernels
