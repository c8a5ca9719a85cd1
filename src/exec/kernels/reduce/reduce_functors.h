// The combining functors of the Reduce* ops (see reduce_engine.h for the protocol). Results
// keep the input type, as ONNX specifies: integer means divide with truncation.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace epctx::exec::kernels::reduce_ops {

template <typename T>
bool IsNan(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(x);
  } else {
    return false;
  }
}

// Integer sums and products wrap, as in every runtime, rather than overflow (undefined
// behaviour for signed types): the arithmetic runs on the unsigned type of the same width.
template <typename T>
T WrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <typename T>
T WrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // unsigned short/char promote to int, whose product can overflow; uint64 covers every width.
    return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}

template <typename T>
struct Sum {
  static constexpr bool kShifted = false;
  static T Init() { return T(0); }
  static T Map(T x, T) { return x; }
  static T Combine(T a, T b) { return WrapAdd(a, b); }
  static T Finish(T acc, int64_t, T) { return acc; }
};

template <typename T>
struct Mean : Sum<T> {
  static T Finish(T acc, int64_t n, T) {
    if constexpr (std::is_floating_point_v<T>) {
      return acc / static_cast<T>(n);
    } else {
      return n == 0 ? T(0) : static_cast<T>(static_cast<int64_t>(acc) / n);
    }
  }
};

template <typename T>
struct Max {
  static constexpr bool kShifted = false;
  static T Init() {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::lowest();
  }
  static T Map(T x, T) { return x; }
  // A NaN, once seen, stays: numpy's maximum propagates it.
  static T Combine(T a, T b) { return (b > a || IsNan(b)) ? b : a; }
  static T Finish(T acc, int64_t, T) { return acc; }
};

template <typename T>
struct Min {
  static constexpr bool kShifted = false;
  static T Init() {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::max();
  }
  static T Map(T x, T) { return x; }
  static T Combine(T a, T b) { return (b < a || IsNan(b)) ? b : a; }
  static T Finish(T acc, int64_t, T) { return acc; }
};

template <typename T>
struct Prod {
  static constexpr bool kShifted = false;
  static T Init() { return T(1); }
  static T Map(T x, T) { return x; }
  static T Combine(T a, T b) { return WrapMul(a, b); }
  static T Finish(T acc, int64_t, T) { return acc; }
};

template <typename T>
struct L1 : Sum<T> {
  static T Map(T x, T) {
    if constexpr (std::is_unsigned_v<T>) {
      return x;
    } else {
      return x < 0 ? WrapMul(x, static_cast<T>(-1)) : x;
    }
  }
};

template <typename T>
struct SumSquare : Sum<T> {
  static T Map(T x, T) { return WrapMul(x, x); }
};

// L2, LogSum and LogSumExp are defined for floating-point types only.
template <typename T>
struct L2 : SumSquare<T> {
  static T Finish(T acc, int64_t, T) { return std::sqrt(acc); }
};

template <typename T>
struct LogSum : Sum<T> {
  static T Finish(T acc, int64_t, T) { return std::log(acc); }
};

// exp(x - max) cannot overflow; the maximum is added back after the log.
template <typename T>
struct LogSumExp : Sum<T> {
  static constexpr bool kShifted = true;
  static T Map(T x, T shift) { return std::exp(x - shift); }
  static T Finish(T acc, int64_t, T shift) { return std::log(acc) + shift; }
};

}  // namespace epctx::exec::kernels::reduce_ops
