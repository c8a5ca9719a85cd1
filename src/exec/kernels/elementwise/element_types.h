// Element types of the element-wise kernels: float16/bfloat16 storage with float compute, a visitor
// over the numeric DataTypes, and the type sets an op accepts.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::elementwise {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// Round to nearest even; NaN stays NaN, overflow becomes infinity.
inline Half FloatToHalf(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  uint16_t out;
  if (x >= 0x47800000u) {
    out = x > 0x7f800000u ? 0x7e00 : 0x7c00;
  } else if (x < 0x38800000u) {
    const float v = std::bit_cast<float>(x) + 0.5f;
    out = static_cast<uint16_t>(std::bit_cast<uint32_t>(v) - 0x3f000000u);
  } else {
    const uint32_t odd = (x >> 13) & 1u;
    x += 0xc8000fffu + odd;
    out = static_cast<uint16_t>(x >> 13);
  }
  return Half{static_cast<uint16_t>(sign | out)};
}

inline float HalfToFloat(Half h) {
  const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  const uint32_t e = (h.bits >> 10) & 0x1fu;
  const uint32_t m = h.bits & 0x3ffu;
  if (e == 0) {
    const float v = static_cast<float>(m) * (1.0f / 16777216.0f);
    return std::bit_cast<float>(std::bit_cast<uint32_t>(v) | sign);
  }
  if (e == 31) return std::bit_cast<float>(sign | 0x7f800000u | (m << 13));
  return std::bit_cast<float>(sign | ((e + 112) << 23) | (m << 13));
}

// Rounds to the nearest bfloat16, ties to even (a float beyond the largest becomes infinity), as
// ONNX Runtime, ONNX's helper since 1.13 and the CPUs' own conversions do; NaN stays NaN. (The
// Cast test data of Debian's ONNX 1.12 was made by truncating: docs/CONFORMANCE.md lists that
// test as failed.)
inline BFloat16 FloatToBFloat16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return BFloat16{static_cast<uint16_t>((x >> 16) | 0x40u)};
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return BFloat16{static_cast<uint16_t>((x + rounding) >> 16)};
}

inline float BFloat16ToFloat(BFloat16 b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b.bits) << 16);
}

// The type arithmetic is done in: float for the 16-bit floats, the type itself otherwise.
template <typename T>
struct ComputeOf {
  using type = T;
};
template <>
struct ComputeOf<Half> {
  using type = float;
};
template <>
struct ComputeOf<BFloat16> {
  using type = float;
};
template <typename T>
using Compute = typename ComputeOf<T>::type;

template <typename T>
inline Compute<T> Load(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return HalfToFloat(v);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16ToFloat(v);
  } else {
    return v;
  }
}

// A floating value as the integer type T. C++ leaves NaN and values outside T's range undefined
// (and ONNX's Cast does not say what they become), so a model's data could reach undefined
// behaviour through them: they saturate to T's limits instead, NaN becomes 0 (Rust's `as`
// rule). Values in range truncate toward zero, as static_cast does.
template <typename T, typename V>
inline T SaturatingFloatToInt(V v) {
  if (v != v) return T{0};
  // The limits as V: the maximum may round up (2^63 for int64 in float), so >= saturates.
  constexpr V kLowest = static_cast<V>(std::numeric_limits<T>::min());
  constexpr V kHighest = static_cast<V>(std::numeric_limits<T>::max());
  if (v <= kLowest) return std::numeric_limits<T>::min();
  if (v >= kHighest) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

template <typename T, typename V>
inline T Store(V v) {
  if constexpr (std::is_same_v<T, Half>) {
    return FloatToHalf(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return FloatToBFloat16(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                       std::is_floating_point_v<V>) {
    return SaturatingFloatToInt<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
inline constexpr bool kIsFloat =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// kFloatOrWideInt: the float types, int32 and int64 (Pow's base).
enum class TypeSet { kFloat, kSigned, kNumeric, kAll, kBool, kUnsignedInt, kInt, kFloatOrWideInt };

template <TypeSet S, typename T>
inline constexpr bool kInSet =
    S == TypeSet::kFloat     ? kIsFloat<T>
    : S == TypeSet::kSigned  ? kIsFloat<T> || (kIsInt<T> && std::is_signed_v<T>)
    : S == TypeSet::kNumeric ? kIsFloat<T> || kIsInt<T>
    : S == TypeSet::kAll     ? true
    : S == TypeSet::kBool    ? std::is_same_v<T, bool>
    : S == TypeSet::kInt     ? kIsInt<T>
    : S == TypeSet::kFloatOrWideInt
        ? kIsFloat<T> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>
        : kIsInt<T>&& std::is_unsigned_v<T>;

inline Status UnsupportedType(DataType t) {
  return EPCTX_ERROR(kUnsupported, "type {} is not supported", DataTypeName(t));
}

template <typename T>
struct Tag {
  using type = T;
};

// Calls fn(Tag<T>{}) for the C++ type of `t`; kUnsupported for string and unknown types.
template <typename Fn>
Status Visit(DataType t, Fn&& fn) {
  switch (t) {
    case DataType::kFloat32:
      return fn(Tag<float>{});
    case DataType::kFloat64:
      return fn(Tag<double>{});
    case DataType::kFloat16:
      return fn(Tag<Half>{});
    case DataType::kBFloat16:
      return fn(Tag<BFloat16>{});
    case DataType::kInt8:
      return fn(Tag<int8_t>{});
    case DataType::kInt16:
      return fn(Tag<int16_t>{});
    case DataType::kInt32:
      return fn(Tag<int32_t>{});
    case DataType::kInt64:
      return fn(Tag<int64_t>{});
    case DataType::kUint8:
      return fn(Tag<uint8_t>{});
    case DataType::kUint16:
      return fn(Tag<uint16_t>{});
    case DataType::kUint32:
      return fn(Tag<uint32_t>{});
    case DataType::kUint64:
      return fn(Tag<uint64_t>{});
    case DataType::kBool:
      return fn(Tag<bool>{});
    default:
      return UnsupportedType(t);
  }
}

// Ok when `t` is in S; kUnsupported naming it otherwise.
template <TypeSet S>
Status ExpectTypeIn(DataType t) {
  return Visit(t, [t](auto tag) -> Status {
    if constexpr (kInSet<S, typename decltype(tag)::type>) {
      return Status::Ok();
    } else {
      return UnsupportedType(t);
    }
  });
}

}  // namespace epctx::exec::kernels::elementwise
