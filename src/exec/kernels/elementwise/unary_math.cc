// The unary element-wise math ops: y = f(x), computed in float for the 16-bit floats. Float maps
// (Floor, Sqrt, Exp, the trigonometric and hyperbolic functions, Erf, Softplus, ...), Neg, Abs and
// Sign (integers too), Not, IsNaN, IsInf, and the activations with attributes (Elu, Celu, Selu,
// LeakyRelu, ThresholdedRelu, HardSigmoid, Shrink). Relu and Sigmoid are in activations.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/elementwise/element_types.h"
#include "exec/kernels/elementwise/elementwise_ops.h"
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

template <typename T>
T Sign(T x) {
  if constexpr (std::is_unsigned_v<T>) {
    return x > T{0} ? T{1} : T{0};
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

template <TypeSet S, typename F>
void RegUnary(KernelRegistry& r, const char* name, int64_t since, F f) {
  r.Register("", name, since, [f](const NodeInfo&) { return MakeUnary<S>(f); });
}

#define EPCTX_FLOAT_FN(expr) [](auto x) { return static_cast<decltype(x)>(expr); }
}  // namespace

void RegisterUnaryMath(KernelRegistry& r) {
  // Unary float maps.
  RegUnary<TypeSet::kFloat>(r, "Floor", 6, EPCTX_FLOAT_FN(std::floor(x)));
  RegUnary<TypeSet::kFloat>(r, "Ceil", 6, EPCTX_FLOAT_FN(std::ceil(x)));
  RegUnary<TypeSet::kFloat>(r, "Round", 11, EPCTX_FLOAT_FN(std::nearbyint(x)));
  RegUnary<TypeSet::kFloat>(r, "Sqrt", 6, EPCTX_FLOAT_FN(std::sqrt(x)));
  RegUnary<TypeSet::kFloat>(r, "Reciprocal", 6, EPCTX_FLOAT_FN(1 / x));
  RegUnary<TypeSet::kFloat>(r, "Exp", 6, EPCTX_FLOAT_FN(std::exp(x)));
  RegUnary<TypeSet::kFloat>(r, "Log", 6, EPCTX_FLOAT_FN(std::log(x)));
  RegUnary<TypeSet::kFloat>(r, "Sin", 7, EPCTX_FLOAT_FN(std::sin(x)));
  RegUnary<TypeSet::kFloat>(r, "Cos", 7, EPCTX_FLOAT_FN(std::cos(x)));
  RegUnary<TypeSet::kFloat>(r, "Tan", 7, EPCTX_FLOAT_FN(std::tan(x)));
  RegUnary<TypeSet::kFloat>(r, "Asin", 7, EPCTX_FLOAT_FN(std::asin(x)));
  RegUnary<TypeSet::kFloat>(r, "Acos", 7, EPCTX_FLOAT_FN(std::acos(x)));
  RegUnary<TypeSet::kFloat>(r, "Atan", 7, EPCTX_FLOAT_FN(std::atan(x)));
  RegUnary<TypeSet::kFloat>(r, "Sinh", 9, EPCTX_FLOAT_FN(std::sinh(x)));
  RegUnary<TypeSet::kFloat>(r, "Cosh", 9, EPCTX_FLOAT_FN(std::cosh(x)));
  RegUnary<TypeSet::kFloat>(r, "Asinh", 9, EPCTX_FLOAT_FN(std::asinh(x)));
  RegUnary<TypeSet::kFloat>(r, "Acosh", 9, EPCTX_FLOAT_FN(std::acosh(x)));
  RegUnary<TypeSet::kFloat>(r, "Atanh", 9, EPCTX_FLOAT_FN(std::atanh(x)));
  RegUnary<TypeSet::kFloat>(r, "Erf", 9, EPCTX_FLOAT_FN(std::erf(x)));
  RegUnary<TypeSet::kFloat>(r, "Tanh", 6, EPCTX_FLOAT_FN(std::tanh(x)));
  RegUnary<TypeSet::kFloat>(r, "Softplus", 1, EPCTX_FLOAT_FN(std::log1p(std::exp(x))));
  RegUnary<TypeSet::kFloat>(r, "Softsign", 1, EPCTX_FLOAT_FN(x / (1 + std::abs(x))));
  RegUnary<TypeSet::kFloat>(
      r, "HardSwish", 14,
      EPCTX_FLOAT_FN(x * std::max<decltype(x)>(0, std::min<decltype(x)>(1, x / 6 + 0.5f))));
  // Neg, Abs, Sign: ints too.
  RegUnary<TypeSet::kSigned>(r, "Neg", 6, [](auto x) { return Neg(x); });
  RegUnary<TypeSet::kNumeric>(r, "Abs", 6, [](auto x) { return Abs(x); });
  RegUnary<TypeSet::kNumeric>(r, "Sign", 9, [](auto x) { return Sign(x); });
  RegUnary<TypeSet::kBool>(r, "Not", 1, [](bool x) { return !x; });
  r.Register("", "IsNaN", 9, [](const NodeInfo&) {
    return MakeUnary<TypeSet::kFloat, true>([](auto x) { return std::isnan(x); });
  });
  r.Register("", "IsInf", 10, [](const NodeInfo& node) -> Result<std::unique_ptr<Kernel>> {
    EPCTX_ASSIGN_OR_RETURN(int64_t pos, node.attrs->GetInt("detect_positive", 1));
    EPCTX_ASSIGN_OR_RETURN(int64_t neg, node.attrs->GetInt("detect_negative", 1));
    return MakeUnary<TypeSet::kFloat, true>([pos, neg](auto x) {
      return std::isinf(x) && ((x > 0 && pos != 0) || (x < 0 && neg != 0));
    });
  });

  // Unary maps with attributes.
  r.Register("", "Elu", 6, [](const NodeInfo& node) -> Result<std::unique_ptr<Kernel>> {
    EPCTX_ASSIGN_OR_RETURN(float alpha, node.attrs->GetFloat("alpha", 1.0f));
    return MakeUnary<TypeSet::kFloat>([alpha](auto x) {
      using T = decltype(x);
      return x < 0 ? static_cast<T>(alpha * (std::exp(x) - 1)) : x;
    });
  });
  r.Register("", "Celu", 12, [](const NodeInfo& node) -> Result<std::unique_ptr<Kernel>> {
    EPCTX_ASSIGN_OR_RETURN(float alpha, node.attrs->GetFloat("alpha", 1.0f));
    return MakeUnary<TypeSet::kFloat>([alpha](auto x) {
      using T = decltype(x);
      return std::max<T>(0, x) + std::min<T>(0, static_cast<T>(alpha * (std::exp(x / alpha) - 1)));
    });
  });
  r.Register("", "Selu", 6, [](const NodeInfo& node) -> Result<std::unique_ptr<Kernel>> {
    EPCTX_ASSIGN_OR_RETURN(float alpha, node.attrs->GetFloat("alpha", 1.67326319217681884765625f));
    EPCTX_ASSIGN_OR_RETURN(float gamma, node.attrs->GetFloat("gamma", 1.05070102214813232421875f));
    return MakeUnary<TypeSet::kFloat>([alpha, gamma](auto x) {
      using T = decltype(x);
      return x > 0 ? static_cast<T>(gamma * x) : static_cast<T>(gamma * alpha * (std::exp(x) - 1));
    });
  });
  r.Register("", "LeakyRelu", 6, [](const NodeInfo& node) -> Result<std::unique_ptr<Kernel>> {
    EPCTX_ASSIGN_OR_RETURN(float alpha, node.attrs->GetFloat("alpha", 0.01f));
    return MakeUnary<TypeSet::kFloat>([alpha](auto x) {
      using T = decltype(x);
      return x < 0 ? static_cast<T>(alpha * x) : x;
    });
  });
  r.Register("", "ThresholdedRelu", 10,
             [](const NodeInfo& node) -> Result<std::unique_ptr<Kernel>> {
               EPCTX_ASSIGN_OR_RETURN(float alpha, node.attrs->GetFloat("alpha", 1.0f));
               return MakeUnary<TypeSet::kFloat>([alpha](auto x) {
                 using T = decltype(x);
                 return x > alpha ? x : T{0};
               });
             });
  r.Register("", "HardSigmoid", 6, [](const NodeInfo& node) -> Result<std::unique_ptr<Kernel>> {
    EPCTX_ASSIGN_OR_RETURN(float alpha, node.attrs->GetFloat("alpha", 0.2f));
    EPCTX_ASSIGN_OR_RETURN(float beta, node.attrs->GetFloat("beta", 0.5f));
    return MakeUnary<TypeSet::kFloat>([alpha, beta](auto x) {
      using T = decltype(x);
      return std::max<T>(0, std::min<T>(1, static_cast<T>(alpha * x + beta)));
    });
  });
  r.Register("", "Shrink", 9, [](const NodeInfo& node) -> Result<std::unique_ptr<Kernel>> {
    EPCTX_ASSIGN_OR_RETURN(float lambd, node.attrs->GetFloat("lambd", 0.5f));
    EPCTX_ASSIGN_OR_RETURN(float bias, node.attrs->GetFloat("bias", 0.0f));
    return MakeUnary<TypeSet::kNumeric>([lambd, bias](auto x) {
      using T = decltype(x);
      const double v = static_cast<double>(x);
      return v < -lambd ? static_cast<T>(v + bias) : v > lambd ? static_cast<T>(v - bias) : T{0};
    });
  });
}

#undef EPCTX_FLOAT_FN

}  // namespace epctx::exec::kernels::elementwise
