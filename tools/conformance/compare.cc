#include "conformance/compare.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "util/status_macros.h"

namespace epctx::cli::conformance {
namespace {

float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) {  // infinity or NaN
    uint32_t bits = sign | 0x7f800000u | (mantissa << 13);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  float magnitude = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -24)  // subnormal
                                  : std::ldexp(static_cast<float>(mantissa | 0x400u),
                                               static_cast<int>(exponent) - 25);
  return sign ? -magnitude : magnitude;
}

float BFloat16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

bool IsFloating(DataType type) {
  return type == DataType::kFloat32 || type == DataType::kFloat64 || type == DataType::kFloat16 ||
         type == DataType::kBFloat16;
}

double FloatAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat32:
      return t.data_as<float>()[i];
    case DataType::kFloat64:
      return t.data_as<double>()[i];
    case DataType::kFloat16:
      return HalfToFloat(t.data_as<uint16_t>()[i]);
    case DataType::kBFloat16:
      return BFloat16ToFloat(t.data_as<uint16_t>()[i]);
    default:
      return NAN;
  }
}

std::string ElementString(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kBool:
      return t.data_as<uint8_t>()[i] ? "true" : "false";
    case DataType::kUint8:
      return std::to_string(t.data_as<uint8_t>()[i]);
    case DataType::kInt8:
      return std::to_string(t.data_as<int8_t>()[i]);
    case DataType::kUint16:
      return std::to_string(t.data_as<uint16_t>()[i]);
    case DataType::kInt16:
      return std::to_string(t.data_as<int16_t>()[i]);
    case DataType::kUint32:
      return std::to_string(t.data_as<uint32_t>()[i]);
    case DataType::kInt32:
      return std::to_string(t.data_as<int32_t>()[i]);
    case DataType::kUint64:
      return std::to_string(t.data_as<uint64_t>()[i]);
    case DataType::kInt64:
      return std::to_string(t.data_as<int64_t>()[i]);
    default:
      return fmt::format("{:.9g}", FloatAt(t, i));
  }
}

// "[1,0,2]": the position of flat index `i` in a tensor of `shape`.
std::string IndexString(const std::vector<int64_t>& shape, int64_t i) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 0) {
      index[d] = i % shape[d];
      i /= shape[d];
    }
  }
  return ShapeToString(index);
}

Status CompareFloating(const Tensor& actual, const Tensor& expected, const Tolerance& tol) {
  int64_t mismatches = 0, first = -1, worst = -1;
  double worst_diff = -1;
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    double a = FloatAt(actual, i), e = FloatAt(expected, i);
    if (Close(a, e, tol)) continue;
    if (first < 0) first = i;
    ++mismatches;
    double diff = std::fabs(a - e);
    if (std::isnan(diff)) diff = INFINITY;
    if (diff > worst_diff) {
      worst_diff = diff;
      worst = i;
    }
  }
  if (mismatches == 0) return Status::Ok();
  const std::vector<int64_t>& shape = expected.shape();
  return EPCTX_ERROR(kFailedPrecondition,
                     "{} of {} elements differ beyond atol {} + rtol {}: first at {}: got {}, "
                     "expected {}; largest difference {:.3g} at {}: got {}, expected {}",
                     mismatches, expected.element_count(), tol.atol, tol.rtol,
                     IndexString(shape, first), ElementString(actual, first),
                     ElementString(expected, first), worst_diff, IndexString(shape, worst),
                     ElementString(actual, worst), ElementString(expected, worst));
}

Status CompareExactly(const Tensor& actual, const Tensor& expected) {
  size_t size = DataTypeSize(expected.dtype());
  const auto* a = static_cast<const unsigned char*>(actual.data());
  const auto* e = static_cast<const unsigned char*>(expected.data());
  int64_t mismatches = 0, first = -1;
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    if (std::memcmp(a + i * size, e + i * size, size) == 0) continue;
    if (first < 0) first = i;
    ++mismatches;
  }
  if (mismatches == 0) return Status::Ok();
  return EPCTX_ERROR(kFailedPrecondition,
                     "{} of {} elements differ: first at {}: got {}, expected {}", mismatches,
                     expected.element_count(), IndexString(expected.shape(), first),
                     ElementString(actual, first), ElementString(expected, first));
}

}  // namespace

bool Close(double actual, double expected, const Tolerance& tol) {
  if (std::isnan(actual) || std::isnan(expected)) return std::isnan(actual) && std::isnan(expected);
  if (std::isinf(actual) || std::isinf(expected)) return actual == expected;
  return std::fabs(actual - expected) <= tol.atol + tol.rtol * std::fabs(expected);
}

Status CompareTensors(const Tensor& actual, const Tensor& expected, const Tolerance& tolerance) {
  if (actual.kind() != expected.kind()) {
    return EPCTX_ERROR(kFailedPrecondition, "{}, expected {}", ValueKindName(actual.kind()),
                       ValueKindName(expected.kind()));
  }
  if (expected.kind() == ValueKind::kNone) return Status::Ok();
  if (expected.kind() == ValueKind::kSequence) {
    const auto& a = actual.elements();
    const auto& e = expected.elements();
    if (a.size() != e.size()) {
      return EPCTX_ERROR(kFailedPrecondition, "a sequence of {}, expected {}", a.size(), e.size());
    }
    for (size_t i = 0; i < e.size(); ++i) {
      EPCTX_RETURN_IF_ERROR_CTX(CompareTensors(a[i], e[i], tolerance), "element {}", i);
    }
    return Status::Ok();
  }
  if (actual.dtype() != expected.dtype()) {
    return EPCTX_ERROR(kFailedPrecondition, "dtype {}, expected {}", DataTypeName(actual.dtype()),
                       DataTypeName(expected.dtype()));
  }
  if (actual.shape() != expected.shape()) {
    return EPCTX_ERROR(kFailedPrecondition, "shape {}, expected {}", ShapeToString(actual.shape()),
                       ShapeToString(expected.shape()));
  }
  if (IsFloating(expected.dtype())) return CompareFloating(actual, expected, tolerance);
  if (expected.dtype() == DataType::kString) {
    for (int64_t i = 0; i < expected.element_count(); ++i) {
      const std::string& a = actual.data_as<std::string>()[i];
      const std::string& e = expected.data_as<std::string>()[i];
      if (a != e) {
        return EPCTX_ERROR(kFailedPrecondition, "element {} is \"{}\", expected \"{}\"", i, a, e);
      }
    }
    return Status::Ok();
  }
  if (DataTypeSize(expected.dtype()) == 0) {
    return EPCTX_ERROR(kFailedPrecondition, "the runner cannot compare {} tensors",
                       DataTypeName(expected.dtype()));
  }
  return CompareExactly(actual, expected);
}

}  // namespace epctx::cli::conformance
