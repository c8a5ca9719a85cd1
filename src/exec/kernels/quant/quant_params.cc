#include "exec/kernels/quant/quant_params.h"

#include <fmt/format.h>

#include "util/status_macros.h"

namespace epctx::exec::kernels {

Result<std::vector<int32_t>> ReadZeroPoints(const Tensor* t, std::string_view name) {
  if (t == nullptr) return std::vector<int32_t>{0};
  if (t->shape().size() > 1) {
    return EPCTX_ERROR(kInvalidArgument, "input {} has rank {}, expected 0 or 1", name,
                       t->shape().size());
  }
  const int64_t n = t->element_count();
  std::vector<int32_t> out(static_cast<size_t>(n));
  switch (t->dtype()) {
    case DataType::kUint8:
      std::copy_n(t->data_as<uint8_t>(), n, out.begin());
      break;
    case DataType::kInt8:
      std::copy_n(t->data_as<int8_t>(), n, out.begin());
      break;
    case DataType::kInt32:
      std::copy_n(t->data_as<int32_t>(), n, out.begin());
      break;
    default:
      return EPCTX_ERROR(kUnsupported, "input {} has type {}, expected uint8, int8 or int32", name,
                         DataTypeName(t->dtype()));
  }
  return out;
}

Result<std::vector<float>> ReadScales(const Tensor& t, std::string_view name) {
  if (t.dtype() != DataType::kFloat32) {
    return EPCTX_ERROR(kUnsupported, "input {} has type {}, expected float32", name,
                       DataTypeName(t.dtype()));
  }
  if (t.shape().size() > 1) {
    return EPCTX_ERROR(kInvalidArgument, "input {} has rank {}, expected 0 or 1", name,
                       t.shape().size());
  }
  const float* p = t.data_as<float>();
  return std::vector<float>(p, p + t.element_count());
}

template <typename T>
Result<std::vector<T>> SpreadParameter(std::vector<T> values, int64_t count,
                                       std::string_view name) {
  if (values.size() == static_cast<size_t>(count)) return values;
  if (values.size() == 1) return std::vector<T>(static_cast<size_t>(count), values[0]);
  return EPCTX_ERROR(kInvalidArgument, "input {} has {} values, expected 1 or {}", name,
                     values.size(), count);
}
template Result<std::vector<float>> SpreadParameter(std::vector<float>, int64_t, std::string_view);
template Result<std::vector<int32_t>> SpreadParameter(std::vector<int32_t>, int64_t,
                                                      std::string_view);

Result<DataType> QuantizedType(const Tensor* zero_point, std::string_view name) {
  if (zero_point == nullptr) return DataType::kUint8;
  if (zero_point->dtype() != DataType::kUint8 && zero_point->dtype() != DataType::kInt8) {
    return EPCTX_ERROR(kUnsupported, "input {} has type {}, expected uint8 or int8", name,
                       DataTypeName(zero_point->dtype()));
  }
  return zero_point->dtype();
}

void WidenMinusZeroPoint(const Tensor& t, const std::vector<int32_t>& zero_points, int64_t inner,
                         int32_t* out) {
  const int64_t n = t.element_count();
  const int64_t groups = static_cast<int64_t>(zero_points.size());
  auto widen = [&](const auto* p) {
    if (groups == 1) {
      const int32_t zp = zero_points[0];
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<int32_t>(p[i]) - zp;
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      out[i] = static_cast<int32_t>(p[i]) - zero_points[static_cast<size_t>((i / inner) % groups)];
    }
  };
  if (t.dtype() == DataType::kUint8) {
    widen(t.data_as<uint8_t>());
  } else {
    widen(t.data_as<int8_t>());
  }
}

Status Expect8Bit(const Tensor& t, std::string_view name) {
  if (t.dtype() != DataType::kUint8 && t.dtype() != DataType::kInt8) {
    return EPCTX_ERROR(kUnsupported, "input {} has type {}, expected uint8 or int8", name,
                       DataTypeName(t.dtype()));
  }
  return Status::Ok();
}

}  // namespace epctx::exec::kernels
