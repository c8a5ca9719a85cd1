// Range: start, start + delta, ... up to (not including) limit, for float, double and the
// integer types. Element i is start + i * delta rather than a running sum, so float error does
// not accumulate.
#include <cmath>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

template <typename T>
Result<int64_t> RangeCount(T start, T limit, T delta) {
  if (delta == T(0)) return EPCTX_ERROR(kInvalidArgument, "delta is 0");
  if constexpr (std::is_floating_point_v<T>) {
    const double n = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                               static_cast<double>(delta));
    if (std::isnan(n) || n > 9.0e18) {
      return EPCTX_ERROR(kInvalidArgument, "range from {} to {} by {} has no finite length", start,
                         limit, delta);
    }
    return n > 0 ? static_cast<int64_t>(n) : 0;
  } else {
    const __int128 span = static_cast<__int128>(limit) - static_cast<__int128>(start);
    const __int128 step = delta;
    if ((span > 0) != (step > 0) || span == 0) return int64_t{0};
    const __int128 mag = step > 0 ? step : -step;
    const __int128 n = ((span > 0 ? span : -span) + mag - 1) / mag;
    return static_cast<int64_t>(n);
  }
}

template <typename T>
Status RangeTyped(KernelContext& ctx, const Tensor& s, const Tensor& l, const Tensor& d) {
  const T start = *s.data_as<T>();
  const T limit = *l.data_as<T>();
  const T delta = *d.data_as<T>();
  EPCTX_ASSIGN_OR_RETURN(int64_t n, RangeCount(start, limit, delta));
  EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, s.dtype(), {n}));
  T* out = y->mutable_data_as<T>();
  if constexpr (std::is_floating_point_v<T>) {
    for (int64_t i = 0; i < n; ++i) out[i] = start + static_cast<T>(i) * delta;
  } else {
    // Every value lies between start and limit, but i * delta alone may not fit: wrap it.
    for (int64_t i = 0; i < n; ++i) {
      out[i] = static_cast<T>(static_cast<uint64_t>(start) +
                              static_cast<uint64_t>(i) * static_cast<uint64_t>(delta));
    }
  }
  return Status::Ok();
}

class RangeKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo&) {
    return std::unique_ptr<Kernel>(new RangeKernel());
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* start, RequiredInput(ctx, 0, "start"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* limit, RequiredInput(ctx, 1, "limit"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* delta, RequiredInput(ctx, 2, "delta"));
    for (const Tensor* t : {start, limit, delta}) {
      if (t->dtype() != start->dtype() || t->element_count() != 1) {
        return EPCTX_ERROR(kInvalidArgument,
                           "start, limit and delta must be scalars of one type, got {} {}",
                           DataTypeName(t->dtype()), ShapeToString(t->shape()));
      }
    }
    switch (start->dtype()) {
      case DataType::kFloat32:
        return RangeTyped<float>(ctx, *start, *limit, *delta);
      case DataType::kFloat64:
        return RangeTyped<double>(ctx, *start, *limit, *delta);
      case DataType::kInt16:
        return RangeTyped<int16_t>(ctx, *start, *limit, *delta);
      case DataType::kInt32:
        return RangeTyped<int32_t>(ctx, *start, *limit, *delta);
      case DataType::kInt64:
        return RangeTyped<int64_t>(ctx, *start, *limit, *delta);
      default:
        return EPCTX_ERROR(kUnsupported, "Range does not support type {}",
                           DataTypeName(start->dtype()));
    }
  }

 private:
  RangeKernel() = default;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateRange(const NodeInfo& node) {
  return RangeKernel::Create(node);
}

}  // namespace epctx::exec::kernels
