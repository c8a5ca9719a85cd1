#include "exec/kernels/control/slices.h"

#include <cstring>
#include <string_view>

#include "exec/kernels/common/shape.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {

Result<Tensor> SliceAlong(const Tensor& t, int64_t axis, int64_t index) {
  const std::vector<int64_t>& shape = t.shape();
  const size_t a = static_cast<size_t>(axis);
  EPCTX_ASSIGN_OR_RETURN(size_t elem, CopyableElementSize(t.dtype(), "scan input"));
  std::vector<int64_t> out_shape(shape);
  out_shape.erase(out_shape.begin() + axis);
  EPCTX_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(t.dtype(), out_shape));
  EPCTX_ASSIGN_OR_RETURN(const int64_t outer, CheckedDimProduct(shape, 0, a));
  EPCTX_ASSIGN_OR_RETURN(const int64_t inner_count, CheckedDimProduct(shape, a + 1, shape.size()));
  const size_t inner = static_cast<size_t>(inner_count) * elem;
  const int64_t count = shape[a];
  const auto* src = static_cast<const std::byte*>(t.data());
  auto* dst = static_cast<std::byte*>(out.mutable_data());
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(dst + static_cast<size_t>(o) * inner,
                src + static_cast<size_t>(o * count + index) * inner, inner);
  }
  return out;
}

Result<Tensor> StackAlong(std::span<const Tensor> parts, int64_t axis, bool reverse,
                          std::string_view what) {
  if (parts.empty()) return EPCTX_ERROR(kInternal, "no {} to stack", what);
  const Tensor& first = parts[0];
  for (const Tensor& p : parts) {
    if (p.dtype() != first.dtype() || p.shape() != first.shape()) {
      return EPCTX_ERROR(kInvalidArgument,
                         "{} differ between iterations: {} {} and {} {} cannot be stacked", what,
                         DataTypeName(first.dtype()), ShapeToString(first.shape()),
                         DataTypeName(p.dtype()), ShapeToString(p.shape()));
    }
  }
  EPCTX_ASSIGN_OR_RETURN(size_t elem, CopyableElementSize(first.dtype(), what));
  const std::vector<int64_t>& part_shape = first.shape();
  const size_t a = static_cast<size_t>(axis);
  std::vector<int64_t> shape(part_shape);
  const int64_t count = static_cast<int64_t>(parts.size());
  shape.insert(shape.begin() + axis, count);
  EPCTX_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(first.dtype(), shape));
  EPCTX_ASSIGN_OR_RETURN(const int64_t outer, CheckedDimProduct(part_shape, 0, a));
  EPCTX_ASSIGN_OR_RETURN(const int64_t inner_count,
                         CheckedDimProduct(part_shape, a, part_shape.size()));
  const size_t inner = static_cast<size_t>(inner_count) * elem;
  auto* dst = static_cast<std::byte*>(out.mutable_data());
  for (int64_t p = 0; p < count; ++p) {
    const auto* src = static_cast<const std::byte*>(parts[static_cast<size_t>(p)].data());
    const int64_t at = reverse ? count - 1 - p : p;
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(dst + static_cast<size_t>(o * count + at) * inner,
                  src + static_cast<size_t>(o) * inner, inner);
    }
  }
  return out;
}

}  // namespace epctx::exec::kernels
