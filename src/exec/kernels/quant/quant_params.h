// Scales, zero points and rounding shared by the quantized kernels.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx::exec::kernels {

// Elements of a zero-point tensor (uint8, int8 or int32) widened to int32; {0} when t is null.
Result<std::vector<int32_t>> ReadZeroPoints(const Tensor* t, std::string_view name);
// Elements of a float32 scale tensor.
Result<std::vector<float>> ReadScales(const Tensor& t, std::string_view name);

// A per-tensor (1 value) or per-`count` (count values) parameter, as `count` values.
template <typename T>
Result<std::vector<T>> SpreadParameter(std::vector<T> values, int64_t count, std::string_view name);

// round-half-to-even(v) + zero_point, saturated to Q's range: ONNX's quantization rounding.
template <typename Q>
inline Q SaturateRound(float v, int32_t zero_point) {
  const float r = std::nearbyint(v) + static_cast<float>(zero_point);
  const float lo = static_cast<float>(std::numeric_limits<Q>::min());
  const float hi = static_cast<float>(std::numeric_limits<Q>::max());
  // NaN (a zero scale) lands on `lo` rather than in an undefined conversion.
  return static_cast<Q>(r > hi ? hi : r >= lo ? r : lo);
}

// The 8-bit type a quantized output has: that of its zero point (uint8 when it is omitted).
Result<DataType> QuantizedType(const Tensor* zero_point, std::string_view name);

// An 8-bit tensor (uint8 or int8) widened to int32 minus a zero point per `group`: element i
// belongs to group (i / inner) % groups. `out` holds t.element_count() values.
void WidenMinusZeroPoint(const Tensor& t, const std::vector<int32_t>& zero_points, int64_t inner,
                         int32_t* out);

Status Expect8Bit(const Tensor& t, std::string_view name);

}  // namespace epctx::exec::kernels
