// OneHot: indices (any numeric type, negative counting back from depth) expanded along a new
// axis of extent depth, holding values[1] at the index and values[0] elsewhere. Indices outside
// [-depth, depth) give an all-off row, as ONNX specifies.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <type_traits>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/indexing/index_input.h"
#include "exec/kernels/indexing/strided_copy.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

template <typename T>
std::vector<int64_t> Truncated(const Tensor& t) {
  const T* p = t.data_as<T>();
  std::vector<int64_t> out(static_cast<size_t>(t.element_count()));
  for (size_t i = 0; i < out.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      // NaN and values beyond int64 are no index: INT64_MIN falls outside every depth.
      out[i] =
          std::isfinite(p[i]) && std::fabs(p[i]) < 9.0e18 ? static_cast<int64_t>(p[i]) : INT64_MIN;
    } else {
      out[i] = static_cast<int64_t>(p[i]);
    }
  }
  return out;
}

// Elements of a numeric tensor as int64, floats truncated toward zero.
Result<std::vector<int64_t>> ReadAsInt64(const Tensor& t, std::string_view name) {
  switch (t.dtype()) {
    case DataType::kFloat32:
      return Truncated<float>(t);
    case DataType::kFloat64:
      return Truncated<double>(t);
    case DataType::kInt8:
      return Truncated<int8_t>(t);
    case DataType::kUint8:
      return Truncated<uint8_t>(t);
    case DataType::kInt16:
      return Truncated<int16_t>(t);
    case DataType::kUint16:
      return Truncated<uint16_t>(t);
    case DataType::kInt32:
      return Truncated<int32_t>(t);
    case DataType::kUint32:
      return Truncated<uint32_t>(t);
    case DataType::kInt64:
      return Truncated<int64_t>(t);
    default:
      return EPCTX_ERROR(kUnsupported, "input {} has type {}, expected a numeric type", name,
                         DataTypeName(t.dtype()));
  }
}

class OneHotKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<OneHotKernel>(new OneHotKernel());
    EPCTX_RETURN_IF_ERROR(ExpectStaticCopyable(node, 2, "values"));
    EPCTX_ASSIGN_OR_RETURN(kernel->axis_, node.attrs->GetInt("axis", -1));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 0, "indices"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* depth_t, RequiredInput(ctx, 1, "depth"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* values, RequiredInput(ctx, 2, "values"));
    EPCTX_ASSIGN_OR_RETURN(size_t element, CopyableElementSize(values->dtype(), "values"));
    if (values->element_count() != 2) {
      return EPCTX_ERROR(kInvalidArgument, "input values has {} elements, expected 2",
                         values->element_count());
    }
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> depth_v, ReadAsInt64(*depth_t, "depth"));
    if (depth_v.size() != 1 || depth_v[0] < 1) {
      return EPCTX_ERROR(kInvalidArgument, "depth must be one positive value");
    }
    const int64_t depth = depth_v[0];
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> index, ReadAsInt64(*indices, "indices"));
    const std::vector<int64_t>& is = indices->shape();
    EPCTX_ASSIGN_OR_RETURN(int64_t axis64,
                           NormalizeAxis(axis_, static_cast<int64_t>(is.size()) + 1, "axis"));
    const size_t axis = static_cast<size_t>(axis64);
    std::vector<int64_t> out_shape = is;
    out_shape.insert(out_shape.begin() + axis64, depth);
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, values->dtype(), out_shape));
    if (y->element_count() == 0) return Status::Ok();
    const auto* off = static_cast<const std::byte*>(values->data());
    const std::byte* on = off + element;
    auto* out = static_cast<std::byte*>(y->mutable_data());
    FillElements(out, y->element_count(), off, element);
    // Indices viewed as [outer, inner] around the new axis: output [outer, depth, inner].
    EPCTX_ASSIGN_OR_RETURN(const int64_t inner, CheckedDimProduct(is, axis, is.size()));
    for (size_t i = 0; i < index.size(); ++i) {
      int64_t v = index[i];
      if (v < 0 && v >= -depth) v += depth;
      if (v < 0 || v >= depth) continue;
      const int64_t o = static_cast<int64_t>(i) / inner;
      const int64_t j = static_cast<int64_t>(i) % inner;
      std::memcpy(out + ((o * depth + v) * inner + j) * static_cast<int64_t>(element), on, element);
    }
    return Status::Ok();
  }

 private:
  OneHotKernel() = default;
  int64_t axis_ = -1;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateOneHot(const NodeInfo& node) {
  return OneHotKernel::Create(node);
}

}  // namespace epctx::exec::kernels
