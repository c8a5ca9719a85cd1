// The element-wise binary ops, all on BinaryKernel: Add, Sub, Mul, Div, Pow, Mod, BitShift, PRelu,
// Equal (on strings: string_equal.cc), Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Xor,
// BitwiseAnd, BitwiseOr, BitwiseXor.
// Before opset 7, Add, Sub, Mul, Div and Pow broadcast B onto A under the attributes broadcast
// and axis, and PRelu its slope onto X (common/legacy_broadcast.h): the ops' kBeforeOpset7.
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "exec/kernels/elementwise/binary_kernel.h"
#include "exec/kernels/elementwise/string_equal.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::elementwise {
namespace {

// The element functions, with their traits (binary_kernel.h). Arguments and results are in the
// compute type: float for the 16-bit floats. They are local to this file on purpose: kernels
// instantiated on them are too, so the compiler keeps each op's run loop a function of its own,
// called per row of the broadcast walk, as it always compiled them.

// a + b, a - b, a * b; integers wrap around: computed in an unsigned type at least as wide as
// unsigned int, so that neither signed overflow nor promotion to int (uint16 * uint16) is
// undefined behaviour.
template <typename F>
struct WrappingOp : BinaryOpTraits {
  static constexpr BinaryBroadcast kBeforeOpset7 = BinaryBroadcast::kLegacyAxis;

  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      using W = std::conditional_t<sizeof(T) < sizeof(unsigned), unsigned, std::make_unsigned_t<T>>;
      return static_cast<T>(F{}(static_cast<W>(a), static_cast<W>(b)));
    } else {
      return F{}(a, b);
    }
  }
};
using AddOp = WrappingOp<std::plus<>>;
using SubOp = WrappingOp<std::minus<>>;
using MulOp = WrappingOp<std::multiplies<>>;

struct DivOp : BinaryOpTraits {
  static constexpr BinaryBroadcast kBeforeOpset7 = BinaryBroadcast::kLegacyAxis;

  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      // The lowest value divided by -1 overflows (and traps on x86); wrap like the other ops.
      using U = std::make_unsigned_t<T>;
      if (b == -1) return static_cast<T>(U{0} - static_cast<U>(a));
    }
    return a / b;
  }

  // An integer division by zero is an error, not a trap.
  template <typename TB>
  static Status CheckB(const Tensor& b) {
    if constexpr (std::is_integral_v<TB>) {
      const TB* bp = b.data_as<TB>();
      for (int64_t i = 0; i < b.element_count(); ++i) {
        if (bp[i] == 0) return EPCTX_ERROR(kInvalidArgument, "integer division by zero");
      }
    }
    return Status::Ok();
  }
};

// Ops whose ONNX signature names the inputs X and Y.
struct InputsXY : BinaryOpTraits {
  static constexpr std::string_view kNameA = "X";
  static constexpr std::string_view kNameB = "Y";
};

// Base and exponent of (possibly) different types; the output has the base's type. The base takes
// the types ONNX's Pow allows it (float types, int32, int64), the exponent every numeric type: the
// other bases, outside the op's type constraints, would be 7 more types times 12 exponent types
// of loops in this file, the largest part of its compile time.
struct PowOp : InputsXY {
  static constexpr TypeSet kTypes = TypeSet::kFloatOrWideInt;
  static constexpr bool kMixedTypes = true;
  static constexpr BinaryBroadcast kBeforeOpset7 = BinaryBroadcast::kLegacyAxis;

  template <typename X, typename E>
  auto operator()(X x, E e) const {
    if constexpr (std::is_same_v<X, float> && std::is_same_v<E, float>) {
      return std::pow(x, e);
    } else {
      return std::pow(static_cast<double>(x), static_cast<double>(e));
    }
  }
};

// Python-style modulo (sign of the divisor) for integers; C fmod/truncation when kFmod. An
// integer divisor of 0 gives 0.
template <bool kFmod>
struct ModOp : BinaryOpTraits {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      const T r = std::fmod(a, b);
      if (kFmod) return r;
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    } else {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return 0;
        const T r = static_cast<T>(a % b);
        if (kFmod) return r;
        return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
      } else {
        return static_cast<T>(a % b);
      }
    }
  }
};

template <bool kLeft>
struct BitShiftOp : InputsXY {
  static constexpr TypeSet kTypes = TypeSet::kUnsignedInt;

  template <typename T>
  T operator()(T a, T b) const {
    if (b >= sizeof(T) * 8) return T{0};
    return static_cast<T>(kLeft ? a << b : a >> b);
  }
};

// BitwiseAnd, BitwiseOr, BitwiseXor (opset 18): on the integer types.
template <typename F>
struct BitwiseOp : BinaryOpTraits {
  static constexpr TypeSet kTypes = TypeSet::kInt;

  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(F{}(a, b));
  }
};

struct PReluOp : BinaryOpTraits {
  static constexpr TypeSet kTypes = TypeSet::kSigned;
  static constexpr std::string_view kNameA = "X";
  static constexpr std::string_view kNameB = "slope";
  static constexpr BinaryBroadcast kBeforeOpset7 = BinaryBroadcast::kLegacySlope;

  template <typename T>
  T operator()(T x, T slope) const {
    return x < T{0} ? static_cast<T>(slope * x) : x;
  }
};

// The comparisons and And, Or, Xor: a bool output.
template <typename F, TypeSet S>
struct PredicateOp : BinaryOpTraits {
  static constexpr TypeSet kTypes = S;
  static constexpr bool kBoolOut = true;

  template <typename T>
  bool operator()(T a, T b) const {
    return F{}(a, b);
  }
};
using EqualOp = PredicateOp<std::equal_to<>, TypeSet::kAll>;
using LessOp = PredicateOp<std::less<>, TypeSet::kNumeric>;
using GreaterOp = PredicateOp<std::greater<>, TypeSet::kNumeric>;
using LessOrEqualOp = PredicateOp<std::less_equal<>, TypeSet::kNumeric>;
using GreaterOrEqualOp = PredicateOp<std::greater_equal<>, TypeSet::kNumeric>;
using AndOp = PredicateOp<std::logical_and<>, TypeSet::kBool>;
using OrOp = PredicateOp<std::logical_or<>, TypeSet::kBool>;
using XorOp = PredicateOp<std::not_equal_to<>, TypeSet::kBool>;

}  // namespace

Result<std::unique_ptr<Kernel>> CreateAdd(const NodeInfo& node) {
  return BinaryKernel<AddOp>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateSub(const NodeInfo& node) {
  return BinaryKernel<SubOp>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateMul(const NodeInfo& node) {
  return BinaryKernel<MulOp>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateDiv(const NodeInfo& node) {
  return BinaryKernel<DivOp>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreatePow(const NodeInfo& node) {
  return BinaryKernel<PowOp>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreatePRelu(const NodeInfo& node) {
  return BinaryKernel<PReluOp>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateEqual(const NodeInfo& node) {
  for (const ValueDesc& v : node.inputs) {
    if (v.dtype == DataType::kString) return CreateStringEqual(node);
  }
  return BinaryKernel<EqualOp>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateLess(const NodeInfo& node) {
  return BinaryKernel<LessOp>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateGreater(const NodeInfo& node) {
  return BinaryKernel<GreaterOp>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateLessOrEqual(const NodeInfo& node) {
  return BinaryKernel<LessOrEqualOp>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateGreaterOrEqual(const NodeInfo& node) {
  return BinaryKernel<GreaterOrEqualOp>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateAnd(const NodeInfo& node) {
  return BinaryKernel<AndOp>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateOr(const NodeInfo& node) {
  return BinaryKernel<OrOp>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateXor(const NodeInfo& node) {
  return BinaryKernel<XorOp>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateBitwiseAnd(const NodeInfo& node) {
  return BinaryKernel<BitwiseOp<std::bit_and<>>>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateBitwiseOr(const NodeInfo& node) {
  return BinaryKernel<BitwiseOp<std::bit_or<>>>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateBitwiseXor(const NodeInfo& node) {
  return BinaryKernel<BitwiseOp<std::bit_xor<>>>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateMod(const NodeInfo& node) {
  EPCTX_ASSIGN_OR_RETURN(int64_t fmod, node.attrs->GetInt("fmod", 0));
  if (fmod != 0) return BinaryKernel<ModOp<true>>::Create(node);
  return BinaryKernel<ModOp<false>>::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateBitShift(const NodeInfo& node) {
  EPCTX_ASSIGN_OR_RETURN(std::string dir, node.attrs->GetString("direction", ""));
  if (dir == "LEFT") return BinaryKernel<BitShiftOp<true>>::Create(node);
  if (dir == "RIGHT") return BinaryKernel<BitShiftOp<false>>::Create(node);
  return EPCTX_ERROR(kInvalidArgument, "BitShift direction must be LEFT or RIGHT, got '{}'", dir);
}

}  // namespace epctx::exec::kernels::elementwise
