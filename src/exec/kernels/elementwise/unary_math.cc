// The unary element-wise math ops: y = f(x), computed in float for the 16-bit floats. Float maps
// (Floor, Sqrt, Exp, the trigonometric and hyperbolic functions, Erf, Softplus, Mish, ...), Neg,
// Abs and Sign (integers too), BitwiseNot, Not, IsNaN, IsInf, and the activations with attributes
// (Elu, Celu, Selu, LeakyRelu, ThresholdedRelu, HardSigmoid, Shrink). Relu and Sigmoid are in
// activations.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/elementwise/element_types.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::elementwise {
namespace {

// y = f(x); kBoolOut: y is bool.
template <TypeSet S, bool kBoolOut, typename F>
class UnaryKernel final : public Kernel {
 public:
  explicit UnaryKernel(F f) : f_(std::move(f)) {}

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    const DataType out_type = kBoolOut ? DataType::kBool : x->dtype();
    return Visit(x->dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (kInSet<S, T>) {
        using Y = std::conditional_t<kBoolOut, bool, T>;
        EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out_type, x->shape()));
        const T* xp = x->data_as<T>();
        Y* yp = y->mutable_data_as<Y>();
        const int64_t n = x->element_count();
        for (int64_t i = 0; i < n; ++i) yp[i] = Store<Y>(f_(Load(xp[i])));
        return Status::Ok();
      } else {
        return UnsupportedType(x->dtype());
      }
    });
  }

 private:
  F f_;
};

template <TypeSet S, bool kBoolOut = false, typename F>
Result<std::unique_ptr<Kernel>> MakeUnary(F f) {
  return std::unique_ptr<Kernel>(new UnaryKernel<S, kBoolOut, F>(std::move(f)));
}

template <typename T>
T Abs(T x) {
  if constexpr (std::is_unsigned_v<T>) {
    return x;
  } else {
    return x < T{0} ? static_cast<T>(-x) : x;
  }
}

// NaN stays NaN, as ONNX Runtime and numpy have it.
template <typename T>
T Sign(T x) {
  if constexpr (std::is_unsigned_v<T>) {
    return x > T{0} ? T{1} : T{0};
  } else if constexpr (std::is_floating_point_v<T>) {
    return x > T{0} ? T{1} : (x < T{0} ? T{-1} : x == T{0} ? T{0} : x);
  } else {
    return x > T{0} ? T{1} : (x < T{0} ? T{-1} : T{0});
  }
}

template <typename T>
auto Neg(T x) {
  if constexpr (std::is_unsigned_v<T>) {
    return static_cast<T>(T{0} - x);
  } else {
    return -x;
  }
}

}  // namespace

// Defines Create<Op>: y = expr(x) on the float types, in the type of x.
#define EPCTX_FLOAT_MAP(Op, expr)                                                             \
  Result<std::unique_ptr<Kernel>> Create##Op(const NodeInfo&) {                               \
    return MakeUnary<TypeSet::kFloat>([](auto x) { return static_cast<decltype(x)>(expr); }); \
  }

EPCTX_FLOAT_MAP(Floor, std::floor(x))
EPCTX_FLOAT_MAP(Ceil, std::ceil(x))
EPCTX_FLOAT_MAP(Round, std::nearbyint(x))
EPCTX_FLOAT_MAP(Sqrt, std::sqrt(x))
EPCTX_FLOAT_MAP(Reciprocal, 1 / x)
EPCTX_FLOAT_MAP(Exp, std::exp(x))
EPCTX_FLOAT_MAP(Log, std::log(x))
EPCTX_FLOAT_MAP(Sin, std::sin(x))
EPCTX_FLOAT_MAP(Cos, std::cos(x))
EPCTX_FLOAT_MAP(Tan, std::tan(x))
EPCTX_FLOAT_MAP(Asin, std::asin(x))
EPCTX_FLOAT_MAP(Acos, std::acos(x))
EPCTX_FLOAT_MAP(Atan, std::atan(x))
EPCTX_FLOAT_MAP(Sinh, std::sinh(x))
EPCTX_FLOAT_MAP(Cosh, std::cosh(x))
EPCTX_FLOAT_MAP(Asinh, std::asinh(x))
EPCTX_FLOAT_MAP(Acosh, std::acosh(x))
EPCTX_FLOAT_MAP(Atanh, std::atanh(x))
EPCTX_FLOAT_MAP(Erf, std::erf(x))
EPCTX_FLOAT_MAP(Tanh, std::tanh(x))
EPCTX_FLOAT_MAP(Softplus, std::log1p(std::exp(x)))
EPCTX_FLOAT_MAP(Softsign, x / (1 + std::abs(x)))
// Mish-18: x * tanh(softplus(x)); softplus overflows to infinity above ~88, where tanh is 1.
EPCTX_FLOAT_MAP(Mish, x* std::tanh(std::log1p(std::exp(x))))
EPCTX_FLOAT_MAP(HardSwish, std::max<decltype(x)>(0, std::min<decltype(x)>(1, x / 6 + 0.5f)) * x)

#undef EPCTX_FLOAT_MAP

Result<std::unique_ptr<Kernel>> CreateNeg(const NodeInfo&) {
  return MakeUnary<TypeSet::kSigned>([](auto x) { return Neg(x); });
}

Result<std::unique_ptr<Kernel>> CreateAbs(const NodeInfo&) {
  return MakeUnary<TypeSet::kNumeric>([](auto x) { return Abs(x); });
}

Result<std::unique_ptr<Kernel>> CreateSign(const NodeInfo&) {
  return MakeUnary<TypeSet::kNumeric>([](auto x) { return Sign(x); });
}

Result<std::unique_ptr<Kernel>> CreateBitwiseNot(const NodeInfo&) {
  return MakeUnary<TypeSet::kInt>([](auto x) { return static_cast<decltype(x)>(~x); });
}

Result<std::unique_ptr<Kernel>> CreateNot(const NodeInfo&) {
  return MakeUnary<TypeSet::kBool>([](bool x) { return !x; });
}

Result<std::unique_ptr<Kernel>> CreateIsNaN(const NodeInfo&) {
  return MakeUnary<TypeSet::kFloat, true>([](auto x) { return std::isnan(x); });
}

Result<std::unique_ptr<Kernel>> CreateIsInf(const NodeInfo& node) {
  EPCTX_ASSIGN_OR_RETURN(int64_t pos, node.attrs->GetInt("detect_positive", 1));
  EPCTX_ASSIGN_OR_RETURN(int64_t neg, node.attrs->GetInt("detect_negative", 1));
  return MakeUnary<TypeSet::kFloat, true>(
      [pos, neg](auto x) { return std::isinf(x) && ((x > 0 && pos != 0) || (x < 0 && neg != 0)); });
}

Result<std::unique_ptr<Kernel>> CreateElu(const NodeInfo& node) {
  EPCTX_ASSIGN_OR_RETURN(float alpha, node.attrs->GetFloat("alpha", 1.0f));
  return MakeUnary<TypeSet::kFloat>([alpha](auto x) {
    using T = decltype(x);
    return x < 0 ? static_cast<T>(alpha * (std::exp(x) - 1)) : x;
  });
}

Result<std::unique_ptr<Kernel>> CreateCelu(const NodeInfo& node) {
  EPCTX_ASSIGN_OR_RETURN(float alpha, node.attrs->GetFloat("alpha", 1.0f));
  return MakeUnary<TypeSet::kFloat>([alpha](auto x) {
    using T = decltype(x);
    // max(0, x) + min(0, ...), written so that NaN stays NaN.
    return x > 0 ? x : static_cast<T>(alpha * (std::exp(x / alpha) - 1));
  });
}

Result<std::unique_ptr<Kernel>> CreateSelu(const NodeInfo& node) {
  EPCTX_ASSIGN_OR_RETURN(float alpha, node.attrs->GetFloat("alpha", 1.67326319217681884765625f));
  EPCTX_ASSIGN_OR_RETURN(float gamma, node.attrs->GetFloat("gamma", 1.05070102214813232421875f));
  return MakeUnary<TypeSet::kFloat>([alpha, gamma](auto x) {
    using T = decltype(x);
    return x > 0 ? static_cast<T>(gamma * x) : static_cast<T>(gamma * alpha * (std::exp(x) - 1));
  });
}

Result<std::unique_ptr<Kernel>> CreateLeakyRelu(const NodeInfo& node) {
  EPCTX_ASSIGN_OR_RETURN(float alpha, node.attrs->GetFloat("alpha", 0.01f));
  return MakeUnary<TypeSet::kFloat>([alpha](auto x) {
    using T = decltype(x);
    return x < 0 ? static_cast<T>(alpha * x) : x;
  });
}

Result<std::unique_ptr<Kernel>> CreateThresholdedRelu(const NodeInfo& node) {
  EPCTX_ASSIGN_OR_RETURN(float alpha, node.attrs->GetFloat("alpha", 1.0f));
  return MakeUnary<TypeSet::kFloat>([alpha](auto x) {
    using T = decltype(x);
    return x > alpha ? x : T{0};
  });
}

Result<std::unique_ptr<Kernel>> CreateHardSigmoid(const NodeInfo& node) {
  EPCTX_ASSIGN_OR_RETURN(float alpha, node.attrs->GetFloat("alpha", 0.2f));
  EPCTX_ASSIGN_OR_RETURN(float beta, node.attrs->GetFloat("beta", 0.5f));
  return MakeUnary<TypeSet::kFloat>([alpha, beta](auto x) {
    using T = decltype(x);
    const T y = static_cast<T>(alpha * x + beta);
    return y > T{1} ? T{1} : (y < T{0} ? T{0} : y);  // NaN stays NaN
  });
}

Result<std::unique_ptr<Kernel>> CreateShrink(const NodeInfo& node) {
  EPCTX_ASSIGN_OR_RETURN(float lambd, node.attrs->GetFloat("lambd", 0.5f));
  EPCTX_ASSIGN_OR_RETURN(float bias, node.attrs->GetFloat("bias", 0.0f));
  return MakeUnary<TypeSet::kNumeric>([lambd, bias](auto x) {
    using T = decltype(x);
    const double v = static_cast<double>(x);
    return v < -lambd ? static_cast<T>(v + bias) : v > lambd ? static_cast<T>(v - bias) : T{0};
  });
}

}  // namespace epctx::exec::kernels::elementwise
