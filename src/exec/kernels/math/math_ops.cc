// The math family: unary float/int maps, variadic Min/Max/Sum/Mean, Where, Cast and CastLike.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "exec/kernels/common/broadcast.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/elementwise/binary_kernel.h"
#include "exec/kernels/elementwise/element_types.h"
#include "exec/kernels/math/math_ops.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

using elementwise::BroadcastBinary;
using elementwise::kInSet;
using elementwise::Load;
using elementwise::Store;
using elementwise::TypeSet;
using elementwise::Visit;

const Attributes& AttrsOf(const NodeInfo& node) {
  static const Attributes kEmpty;
  return node.attrs != nullptr ? *node.attrs : kEmpty;
}

Status Unsupported(DataType t) {
  return EPCTX_ERROR(kUnsupported, "type {} is not supported", DataTypeName(t));
}

// ---------------------------------------------------------------------------------------------
// Unary maps: y = f(x), computed in float for the 16-bit floats. kBoolOut: y is bool.

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
        return Unsupported(x->dtype());
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

// ---------------------------------------------------------------------------------------------
// Variadic Min/Max/Sum/Mean: y starts as input 0 broadcast, then y = f(y, input k) in place.

struct AddOp {
  template <typename T>
  T operator()(T a, T b) const {
    return a + b;
  }
};

// Max and Min: a NaN wins, as in numpy.maximum and numpy.minimum (ONNX's reference).
template <typename Keep>
struct ExtremumOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a)) return a;
    }
    return Keep{}(a, b) ? a : b;
  }
};
using MaxOp = ExtremumOp<std::greater<>>;
using MinOp = ExtremumOp<std::less<>>;

template <typename F>
class VariadicKernel final : public Kernel {
 public:
  VariadicKernel(F f, bool mean) : f_(std::move(f)), mean_(mean) {}

  Status Run(KernelContext& ctx) override {
    const size_t count = ctx.input_count();
    if (count == 0) return EPCTX_ERROR(kInvalidArgument, "expected at least 1 input");
    std::vector<const Tensor*> in;
    std::vector<int64_t> shape;
    for (size_t k = 0; k < count; ++k) {
      EPCTX_ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, k, "data_0"));
      if (!in.empty() && t->dtype() != in[0]->dtype()) {
        return EPCTX_ERROR(kInvalidArgument, "inputs have types {} and {}",
                           DataTypeName(in[0]->dtype()), DataTypeName(t->dtype()));
      }
      if (k == 0) {
        shape = t->shape();
      } else {
        EPCTX_ASSIGN_OR_RETURN(shape, BroadcastShapes(shape, t->shape()));
      }
      in.push_back(t);
    }
    const DataType type = in[0]->dtype();
    return Visit(type, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (kInSet<TypeSet::kNumeric, T>) {
        EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, type, shape));
        const int threads = ctx.num_threads();
        BroadcastBinary<T, T, T>(*y, *in[0], *y, threads, [](auto, auto b) { return b; });
        for (size_t k = 1; k < in.size(); ++k)
          BroadcastBinary<T, T, T>(*y, *in[k], *y, threads, f_);
        if (mean_) {
          T* yp = y->mutable_data_as<T>();
          for (int64_t i = 0; i < y->element_count(); ++i) {
            yp[i] = Store<T>(Load(yp[i]) / static_cast<elementwise::Compute<T>>(in.size()));
          }
        }
        return Status::Ok();
      } else {
        return Unsupported(type);
      }
    });
  }

 private:
  F f_;
  bool mean_;
};

template <typename F>
Result<std::unique_ptr<Kernel>> MakeVariadic(F f, bool mean = false) {
  return std::unique_ptr<Kernel>(new VariadicKernel<F>(std::move(f), mean));
}

// ---------------------------------------------------------------------------------------------
// Where(condition, X, Y) with three-way broadcasting.

// Element strides of `in` broadcast to `out` (0 on broadcast dims), aligned to out's rank.
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in,
                                      const std::vector<int64_t>& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t k = 0; k < in.size(); ++k) {
    const size_t di = in.size() - 1 - k;
    const size_t d = out.size() - 1 - k;
    strides[d] = in[di] == 1 ? 0 : stride;
    stride *= in[di];
  }
  return strides;
}

template <typename T>
void WhereApply(const Tensor& c, const Tensor& x, const Tensor& yv, Tensor& out) {
  const std::vector<int64_t>& shape = out.shape();
  const std::vector<int64_t> cs = BroadcastStrides(c.shape(), shape);
  const std::vector<int64_t> xs = BroadcastStrides(x.shape(), shape);
  const std::vector<int64_t> ys = BroadcastStrides(yv.shape(), shape);
  const bool* cp = c.data_as<bool>();
  const T* xp = x.data_as<T>();
  const T* yp = yv.data_as<T>();
  T* op = out.mutable_data_as<T>();
  const int64_t n = out.element_count();
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t co = 0, xo = 0, yo = 0;
  for (int64_t i = 0; i < n; ++i) {
    op[i] = cp[co] ? xp[xo] : yp[yo];
    for (size_t d = shape.size(); d-- > 0;) {
      co += cs[d];
      xo += xs[d];
      yo += ys[d];
      if (++idx[d] < shape[d]) break;
      co -= cs[d] * shape[d];
      xo -= xs[d] * shape[d];
      yo -= ys[d] * shape[d];
      idx[d] = 0;
    }
  }
}

class WhereKernel final : public Kernel {
 public:
  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* c, RequiredInput(ctx, 0, "condition"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 1, "X"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* y, RequiredInput(ctx, 2, "Y"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*c, DataType::kBool, "condition"));
    if (x->dtype() != y->dtype()) {
      return EPCTX_ERROR(kInvalidArgument, "inputs X and Y have types {} and {}",
                         DataTypeName(x->dtype()), DataTypeName(y->dtype()));
    }
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastShapes(c->shape(), x->shape()));
    EPCTX_ASSIGN_OR_RETURN(shape, BroadcastShapes(shape, y->shape()));
    EPCTX_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x->dtype(), std::move(shape)));
    switch (DataTypeSize(x->dtype())) {
      case 1:
        WhereApply<uint8_t>(*c, *x, *y, *out);
        break;
      case 2:
        WhereApply<uint16_t>(*c, *x, *y, *out);
        break;
      case 4:
        WhereApply<uint32_t>(*c, *x, *y, *out);
        break;
      case 8:
        WhereApply<uint64_t>(*c, *x, *y, *out);
        break;
      default:
        return Unsupported(x->dtype());
    }
    return Status::Ok();
  }
};

// ---------------------------------------------------------------------------------------------
// Cast / CastLike.

Status CastTensor(const Tensor& x, Tensor& y) {
  return Visit(x.dtype(), [&](auto ts) -> Status {
    using S = typename decltype(ts)::type;
    return Visit(y.dtype(), [&](auto td) -> Status {
      using D = typename decltype(td)::type;
      const S* xp = x.data_as<S>();
      D* yp = y.mutable_data_as<D>();
      const int64_t n = x.element_count();
      if constexpr (std::is_same_v<S, D>) {
        if (n > 0) std::memcpy(yp, xp, x.byte_size());
      } else {
        for (int64_t i = 0; i < n; ++i) yp[i] = Store<D>(Load(xp[i]));
      }
      return Status::Ok();
    });
  });
}

bool Castable(DataType t) {
  return t != DataType::kString && t != DataType::kUndefined && DataTypeSize(t) != 0;
}

class CastKernel final : public Kernel {
 public:
  // `to` kUndefined: take the type of input 1 (CastLike).
  explicit CastKernel(DataType to) : to_(to) {}

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    DataType to = to_;
    if (to == DataType::kUndefined) {
      EPCTX_ASSIGN_OR_RETURN(const Tensor* like, RequiredInput(ctx, 1, "target_type"));
      to = like->dtype();
    }
    if (!Castable(x->dtype())) return Unsupported(x->dtype());
    if (!Castable(to)) return Unsupported(to);
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, to, x->shape()));
    return CastTensor(*x, *y);
  }

 private:
  DataType to_;
};

Result<std::unique_ptr<Kernel>> CreateCast(const NodeInfo& node) {
  EPCTX_ASSIGN_OR_RETURN(const AttributeValue* to, AttrsOf(node).Require("to", AttrType::kInt));
  const auto type = static_cast<DataType>(to->i);
  if (!Castable(type)) {
    return EPCTX_ERROR(kUnsupported, "Cast to type {} is not supported", DataTypeName(type));
  }
  if (!node.inputs.empty() && node.inputs[0].dtype != DataType::kUndefined &&
      !Castable(node.inputs[0].dtype)) {
    return EPCTX_ERROR(kUnsupported, "Cast from type {} is not supported",
                       DataTypeName(node.inputs[0].dtype));
  }
  return std::unique_ptr<Kernel>(new CastKernel(type));
}

Result<std::unique_ptr<Kernel>> CreateCastLike(const NodeInfo& node) {
  for (const ValueDesc& v : node.inputs) {
    if (v.dtype != DataType::kUndefined && !Castable(v.dtype)) {
      return EPCTX_ERROR(kUnsupported, "CastLike with type {} is not supported",
                         DataTypeName(v.dtype));
    }
  }
  return std::unique_ptr<Kernel>(new CastKernel(DataType::kUndefined));
}

// ---------------------------------------------------------------------------------------------
// Element functions.

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

void RegisterMathOps(KernelRegistry& r) {
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
    EPCTX_ASSIGN_OR_RETURN(int64_t pos, AttrsOf(node).GetInt("detect_positive", 1));
    EPCTX_ASSIGN_OR_RETURN(int64_t neg, AttrsOf(node).GetInt("detect_negative", 1));
    return MakeUnary<TypeSet::kFloat, true>([pos, neg](auto x) {
      return std::isinf(x) && ((x > 0 && pos != 0) || (x < 0 && neg != 0));
    });
  });

  // Unary maps with attributes.
  r.Register("", "Elu", 6, [](const NodeInfo& node) -> Result<std::unique_ptr<Kernel>> {
    EPCTX_ASSIGN_OR_RETURN(float alpha, AttrsOf(node).GetFloat("alpha", 1.0f));
    return MakeUnary<TypeSet::kFloat>([alpha](auto x) {
      using T = decltype(x);
      return x < 0 ? static_cast<T>(alpha * (std::exp(x) - 1)) : x;
    });
  });
  r.Register("", "Celu", 12, [](const NodeInfo& node) -> Result<std::unique_ptr<Kernel>> {
    EPCTX_ASSIGN_OR_RETURN(float alpha, AttrsOf(node).GetFloat("alpha", 1.0f));
    return MakeUnary<TypeSet::kFloat>([alpha](auto x) {
      using T = decltype(x);
      return std::max<T>(0, x) + std::min<T>(0, static_cast<T>(alpha * (std::exp(x / alpha) - 1)));
    });
  });
  r.Register("", "Selu", 6, [](const NodeInfo& node) -> Result<std::unique_ptr<Kernel>> {
    EPCTX_ASSIGN_OR_RETURN(float alpha,
                           AttrsOf(node).GetFloat("alpha", 1.67326319217681884765625f));
    EPCTX_ASSIGN_OR_RETURN(float gamma,
                           AttrsOf(node).GetFloat("gamma", 1.05070102214813232421875f));
    return MakeUnary<TypeSet::kFloat>([alpha, gamma](auto x) {
      using T = decltype(x);
      return x > 0 ? static_cast<T>(gamma * x) : static_cast<T>(gamma * alpha * (std::exp(x) - 1));
    });
  });
  r.Register("", "LeakyRelu", 6, [](const NodeInfo& node) -> Result<std::unique_ptr<Kernel>> {
    EPCTX_ASSIGN_OR_RETURN(float alpha, AttrsOf(node).GetFloat("alpha", 0.01f));
    return MakeUnary<TypeSet::kFloat>([alpha](auto x) {
      using T = decltype(x);
      return x < 0 ? static_cast<T>(alpha * x) : x;
    });
  });
  r.Register("", "ThresholdedRelu", 10,
             [](const NodeInfo& node) -> Result<std::unique_ptr<Kernel>> {
               EPCTX_ASSIGN_OR_RETURN(float alpha, AttrsOf(node).GetFloat("alpha", 1.0f));
               return MakeUnary<TypeSet::kFloat>([alpha](auto x) {
                 using T = decltype(x);
                 return x > alpha ? x : T{0};
               });
             });
  r.Register("", "HardSigmoid", 6, [](const NodeInfo& node) -> Result<std::unique_ptr<Kernel>> {
    EPCTX_ASSIGN_OR_RETURN(float alpha, AttrsOf(node).GetFloat("alpha", 0.2f));
    EPCTX_ASSIGN_OR_RETURN(float beta, AttrsOf(node).GetFloat("beta", 0.5f));
    return MakeUnary<TypeSet::kFloat>([alpha, beta](auto x) {
      using T = decltype(x);
      return std::max<T>(0, std::min<T>(1, static_cast<T>(alpha * x + beta)));
    });
  });
  r.Register("", "Shrink", 9, [](const NodeInfo& node) -> Result<std::unique_ptr<Kernel>> {
    EPCTX_ASSIGN_OR_RETURN(float lambd, AttrsOf(node).GetFloat("lambd", 0.5f));
    EPCTX_ASSIGN_OR_RETURN(float bias, AttrsOf(node).GetFloat("bias", 0.0f));
    return MakeUnary<TypeSet::kNumeric>([lambd, bias](auto x) {
      using T = decltype(x);
      const double v = static_cast<double>(x);
      return v < -lambd ? static_cast<T>(v + bias) : v > lambd ? static_cast<T>(v - bias) : T{0};
    });
  });

  // Variadic.
  r.Register("", "Sum", 6, [](const NodeInfo&) { return MakeVariadic(AddOp{}); });
  r.Register("", "Mean", 6, [](const NodeInfo&) { return MakeVariadic(AddOp{}, true); });
  r.Register("", "Max", 6, [](const NodeInfo&) { return MakeVariadic(MaxOp{}); });
  r.Register("", "Min", 6, [](const NodeInfo&) { return MakeVariadic(MinOp{}); });

  r.Register("", "Where", 9, [](const NodeInfo&) {
    return Result<std::unique_ptr<Kernel>>(std::make_unique<WhereKernel>());
  });
  r.Register("", "Cast", 6, &CreateCast);
  r.Register("", "CastLike", 15, &CreateCastLike);
}

#undef EPCTX_FLOAT_FN

}  // namespace epctx::exec::kernels
