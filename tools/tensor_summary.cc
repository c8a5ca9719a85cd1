#include "tensor_summary.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace epctx::cli {
namespace {

constexpr int64_t kShownValues = 8;

float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

float BFloat16ToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// Element type tags for the 16-bit float formats, which are stored as uint16_t.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
// Bools are read as bytes: a byte other than 0 or 1 must not become a bool object.
struct BoolByte {
  uint8_t byte;
};

template <typename T>
auto Value(const T& v) {
  if constexpr (std::is_same_v<T, Half>) {
    return HalfToFloat(v.bits);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16ToFloat(v.bits);
  } else if constexpr (std::is_same_v<T, BoolByte>) {
    return static_cast<int>(v.byte != 0);
  } else {
    return v;
  }
}

template <typename V>
std::string FormatValue(V v) {
  if constexpr (std::is_floating_point_v<V>) {
    return fmt::format("{:.6g}", v);
  } else {
    return fmt::format("{}", v);
  }
}

template <typename T>
std::string Summarize(const Tensor& tensor) {
  using V = decltype(Value(std::declval<T>()));
  const auto* bytes = static_cast<const unsigned char*>(tensor.data());
  int64_t count = tensor.element_count();
  auto at = [&](int64_t i) {
    T element;
    std::memcpy(&element, bytes + i * sizeof(T), sizeof(T));
    return Value(element);
  };

  std::string out;
  int64_t nan_count = 0;
  bool any = false;
  V min{}, max{};
  double sum = 0;
  for (int64_t i = 0; i < count; ++i) {
    V v = at(i);
    if constexpr (std::is_floating_point_v<V>) {
      if (std::isnan(v)) {
        ++nan_count;
        continue;
      }
    }
    if (!any || v < min) min = v;
    if (!any || v > max) max = v;
    any = true;
    sum += static_cast<double>(v);
  }
  if (any) {
    out += fmt::format("  min {}  max {}  mean {:.6g}", FormatValue(min), FormatValue(max),
                       sum / static_cast<double>(count - nan_count));
  }
  if (nan_count > 0) out += fmt::format("  nan {}", nan_count);
  if (!out.empty()) out += '\n';

  out += "  values [";
  for (int64_t i = 0; i < count && i < kShownValues; ++i) {
    if (i > 0) out += ", ";
    out += FormatValue(at(i));
  }
  if (count > kShownValues) out += fmt::format(", ... ({} in all)", count);
  out += "]\n";
  return out;
}

std::string SummarizeValues(const Tensor& tensor) {
  switch (tensor.dtype()) {
    case DataType::kFloat32:
      return Summarize<float>(tensor);
    case DataType::kFloat64:
      return Summarize<double>(tensor);
    case DataType::kFloat16:
      return Summarize<Half>(tensor);
    case DataType::kBFloat16:
      return Summarize<BFloat16>(tensor);
    case DataType::kInt8:
      return Summarize<int8_t>(tensor);
    case DataType::kUint8:
      return Summarize<uint8_t>(tensor);
    case DataType::kInt16:
      return Summarize<int16_t>(tensor);
    case DataType::kUint16:
      return Summarize<uint16_t>(tensor);
    case DataType::kInt32:
      return Summarize<int32_t>(tensor);
    case DataType::kUint32:
      return Summarize<uint32_t>(tensor);
    case DataType::kInt64:
      return Summarize<int64_t>(tensor);
    case DataType::kUint64:
      return Summarize<uint64_t>(tensor);
    case DataType::kBool:
      return Summarize<BoolByte>(tensor);
    case DataType::kUndefined:
    case DataType::kString:
      break;
  }
  return "  (values of this type are not shown)\n";
}

}  // namespace

std::string SummarizeTensor(const std::string& name, const Tensor& tensor) {
  std::string out =
      fmt::format("{}: {} {}\n", name, DataTypeName(tensor.dtype()), ShapeToString(tensor.shape()));
  if (tensor.element_count() == 0) return out + "  (no elements)\n";
  return out + SummarizeValues(tensor);
}

}  // namespace epctx::cli
