// The math family: unary float/int maps, broadcasting binary ops (arithmetic, comparison, logic,
// Pow, Mod, BitShift, PRelu), variadic Min/Max/Sum/Mean, Where, Cast and CastLike.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "exec/kernels/common/broadcast.h"
#include "exec/kernels/common/legacy_broadcast.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/elementwise/element_types.h"
#include "exec/kernels/math/math_ops.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

using elementwise::BFloat16;
using elementwise::Half;
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
// Binary maps with numpy broadcasting.

template <typename TA, typename TB, typename TY, typename F>
void BroadcastApply(const Tensor& a, const Tensor& b, Tensor& y, int threads, const F& f) {
  const BroadcastPlan plan = PlanBroadcast(a.shape(), b.shape(), y.shape());
  const TA* ap = a.data_as<TA>();
  const TB* bp = b.data_as<TB>();
  TY* yp = y.mutable_data_as<TY>();
  ForEachBroadcastRun(plan, threads,
                      [&](int64_t yo, int64_t ao, int64_t bo, int64_t n, int64_t as, int64_t bs) {
                        for (int64_t i = 0; i < n; ++i) {
                          yp[yo + i] = Store<TY>(f(Load(ap[ao + i * as]), Load(bp[bo + i * bs])));
                        }
                      });
}

// Both inputs of one type; the output has that type, or bool when kBoolOut.
template <TypeSet S, bool kBoolOut, typename F>
class BinaryKernel final : public Kernel {
 public:
  explicit BinaryKernel(F f) : f_(std::move(f)) {}

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, "A"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1, "B"));
    if (a->dtype() != b->dtype()) {
      return EPCTX_ERROR(kInvalidArgument, "inputs A and B have types {} and {}",
                         DataTypeName(a->dtype()), DataTypeName(b->dtype()));
    }
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastShapes(a->shape(), b->shape()));
    const DataType out_type = kBoolOut ? DataType::kBool : a->dtype();
    return Visit(a->dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (kInSet<S, T>) {
        using Y = std::conditional_t<kBoolOut, bool, T>;
        EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out_type, std::move(shape)));
        BroadcastApply<T, T, Y>(*a, *b, *y, ctx.num_threads(), f_);
        return Status::Ok();
      } else {
        return Unsupported(a->dtype());
      }
    });
  }

 private:
  F f_;
};

template <TypeSet S, bool kBoolOut = false, typename F>
Result<std::unique_ptr<Kernel>> MakeBinary(F f) {
  return std::unique_ptr<Kernel>(new BinaryKernel<S, kBoolOut, F>(std::move(f)));
}

// ---------------------------------------------------------------------------------------------
// Variadic Min/Max/Sum/Mean: y starts as input 0 broadcast, then y = f(y, input k) in place.

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
        BroadcastApply<T, T, T>(*y, *in[0], *y, threads, [](auto, auto b) { return b; });
        for (size_t k = 1; k < in.size(); ++k) BroadcastApply<T, T, T>(*y, *in[k], *y, threads, f_);
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
// Pow: base and exponent of (possibly) different numeric types; output has the base's type.
// Opset 1 broadcasts the exponent onto the base under the legacy broadcast/axis attributes.

class PowKernel final : public Kernel {
 public:
  explicit PowKernel(std::optional<LegacyBroadcast> legacy = std::nullopt) : legacy_(legacy) {}

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, "X"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* b_in, RequiredInput(ctx, 1, "Y"));
    Tensor b_view;
    const Tensor* b = b_in;
    if (legacy_.has_value()) {
      // The exponent re-viewed with the base's rank; numpy broadcasting then gives X's shape.
      EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> b_shape,
                             LegacyShapeOfB(*legacy_, a->shape(), b_in->shape()));
      b_view = Tensor::View(b_in->dtype(), std::move(b_shape), b_in->data(), nullptr);
      b = &b_view;
    }
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastShapes(a->shape(), b->shape()));
    return Visit(a->dtype(), [&](auto ta) -> Status {
      using TA = typename decltype(ta)::type;
      if constexpr (kInSet<TypeSet::kNumeric, TA>) {
        return Visit(b->dtype(), [&](auto tb) -> Status {
          using TB = typename decltype(tb)::type;
          if constexpr (kInSet<TypeSet::kNumeric, TB>) {
            EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, a->dtype(), shape));
            BroadcastApply<TA, TB, TA>(*a, *b, *y, ctx.num_threads(), [](auto x, auto e) {
              if constexpr (std::is_same_v<decltype(x), float> &&
                            std::is_same_v<decltype(e), float>) {
                return std::pow(x, e);
              } else {
                return std::pow(static_cast<double>(x), static_cast<double>(e));
              }
            });
            return Status::Ok();
          } else {
            return Unsupported(b->dtype());
          }
        });
      } else {
        return Unsupported(a->dtype());
      }
    });
  }

 private:
  std::optional<LegacyBroadcast> legacy_;
};

Result<std::unique_ptr<Kernel>> CreateLegacyPow(const NodeInfo& node) {
  EPCTX_ASSIGN_OR_RETURN(LegacyBroadcast lb, ParseLegacyBroadcast(AttrsOf(node)));
  const std::vector<int64_t>* sa = StaticShape(node, 0);
  const std::vector<int64_t>* sb = StaticShape(node, 1);
  if (sa != nullptr && sb != nullptr) {
    EPCTX_RETURN_IF_ERROR(LegacyShapeOfB(lb, *sa, *sb).status());
  }
  return std::unique_ptr<Kernel>(new PowKernel(lb));
}

// ---------------------------------------------------------------------------------------------
// PRelu before opset 7: the slope has one element, or one per channel (dim 1 of X) as in Caffe2,
// from which these versions came. Any other slope must broadcast onto X numpy-style.

template <typename T>
T PReluOf(T x, T slope) {
  return x < T{0} ? static_cast<T>(slope * x) : x;
}

// The slope's shape re-viewed so that numpy broadcasting of X and the slope gives X's shape.
Result<std::vector<int64_t>> LegacySlopeShape(const std::vector<int64_t>& x,
                                              const std::vector<int64_t>& slope) {
  bool single = true;
  for (int64_t d : slope) single = single && d == 1;
  if (single) return std::vector<int64_t>(x.size(), 1);
  if (slope.size() == 1 && x.size() >= 2 && slope[0] == x[1]) {
    std::vector<int64_t> out(x.size(), 1);
    out[1] = slope[0];
    return out;
  }
  Result<std::vector<int64_t>> joint = BroadcastShapes(x, slope);
  if (!joint.ok() || *joint != x) {
    return EPCTX_ERROR(kInvalidArgument,
                       "slope of shape {} is neither a single value, one per channel (dim 1) of X "
                       "of shape {}, nor broadcastable onto X",
                       ShapeToString(slope), ShapeToString(x));
  }
  return slope;
}

class LegacyPReluKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    const std::vector<int64_t>* sx = StaticShape(node, 0);
    const std::vector<int64_t>* ss = StaticShape(node, 1);
    const auto known = [](const std::vector<int64_t>* s) {
      return s != nullptr && std::all_of(s->begin(), s->end(), [](int64_t d) { return d >= 0; });
    };
    if (known(sx) && known(ss)) EPCTX_RETURN_IF_ERROR(LegacySlopeShape(*sx, *ss).status());
    return std::unique_ptr<Kernel>(new LegacyPReluKernel());
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* slope, RequiredInput(ctx, 1, "slope"));
    if (x->dtype() != slope->dtype()) {
      return EPCTX_ERROR(kInvalidArgument, "inputs X and slope have types {} and {}",
                         DataTypeName(x->dtype()), DataTypeName(slope->dtype()));
    }
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> slope_shape,
                           LegacySlopeShape(x->shape(), slope->shape()));
    const Tensor slope_view =
        Tensor::View(slope->dtype(), std::move(slope_shape), slope->data(), nullptr);
    return Visit(x->dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (kInSet<TypeSet::kSigned, T>) {
        EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), x->shape()));
        BroadcastApply<T, T, T>(*x, slope_view, *y, ctx.num_threads(),
                                [](auto v, auto s) { return PReluOf(v, s); });
        return Status::Ok();
      } else {
        return Unsupported(x->dtype());
      }
    });
  }

 private:
  LegacyPReluKernel() = default;
};

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

// Python-style modulo (sign of the divisor) for integers; C fmod/truncation when `fmod`.
template <typename T>
T Mod(T a, T b, bool fmod) {
  if constexpr (std::is_floating_point_v<T>) {
    const T r = std::fmod(a, b);
    if (fmod) return r;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  } else {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;
      const T r = static_cast<T>(a % b);
      if (fmod) return r;
      return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
    } else {
      return static_cast<T>(a % b);
    }
  }
}

template <typename T>
bool IsNan(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(x);
  } else {
    return false;
  }
}

template <TypeSet S, typename F>
void RegUnary(KernelRegistry& r, const char* name, int64_t since, F f) {
  r.Register("", name, since, [f](const NodeInfo&) { return MakeUnary<S>(f); });
}

template <TypeSet S, bool kBoolOut = false, typename F>
void RegBinary(KernelRegistry& r, const char* name, int64_t since, F f) {
  r.Register("", name, since, [f](const NodeInfo&) { return MakeBinary<S, kBoolOut>(f); });
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

  // Binary ops.
  r.Register("", "PRelu", 1, &LegacyPReluKernel::Create);
  RegBinary<TypeSet::kSigned>(r, "PRelu", 7, [](auto x, auto slope) { return PReluOf(x, slope); });
  RegBinary<TypeSet::kAll, true>(r, "Equal", 7, [](auto a, auto b) { return a == b; });
  RegBinary<TypeSet::kNumeric, true>(r, "Less", 7, [](auto a, auto b) { return a < b; });
  RegBinary<TypeSet::kNumeric, true>(r, "Greater", 7, [](auto a, auto b) { return a > b; });
  RegBinary<TypeSet::kNumeric, true>(r, "LessOrEqual", 12, [](auto a, auto b) { return a <= b; });
  RegBinary<TypeSet::kNumeric, true>(r, "GreaterOrEqual", 12,
                                     [](auto a, auto b) { return a >= b; });
  RegBinary<TypeSet::kBool>(r, "And", 7, [](bool a, bool b) { return a && b; });
  RegBinary<TypeSet::kBool>(r, "Or", 7, [](bool a, bool b) { return a || b; });
  RegBinary<TypeSet::kBool>(r, "Xor", 7, [](bool a, bool b) { return a != b; });
  r.Register("", "Mod", 10, [](const NodeInfo& node) -> Result<std::unique_ptr<Kernel>> {
    EPCTX_ASSIGN_OR_RETURN(int64_t fmod, AttrsOf(node).GetInt("fmod", 0));
    const bool f = fmod != 0;
    return MakeBinary<TypeSet::kNumeric>([f](auto a, auto b) { return Mod(a, b, f); });
  });
  r.Register("", "BitShift", 11, [](const NodeInfo& node) -> Result<std::unique_ptr<Kernel>> {
    EPCTX_ASSIGN_OR_RETURN(std::string dir, AttrsOf(node).GetString("direction", ""));
    if (dir != "LEFT" && dir != "RIGHT") {
      return EPCTX_ERROR(kInvalidArgument, "BitShift direction must be LEFT or RIGHT, got '{}'",
                         dir);
    }
    const bool left = dir == "LEFT";
    return MakeBinary<TypeSet::kUnsignedInt>([left](auto a, auto b) {
      using T = decltype(a);
      if (b >= sizeof(T) * 8) return T{0};
      return static_cast<T>(left ? a << b : a >> b);
    });
  });
  r.Register("", "Pow", 1, &CreateLegacyPow);
  r.Register("", "Pow", 7, [](const NodeInfo&) {
    return Result<std::unique_ptr<Kernel>>(std::make_unique<PowKernel>());
  });

  // Variadic.
  r.Register("", "Sum", 6,
             [](const NodeInfo&) { return MakeVariadic([](auto a, auto b) { return a + b; }); });
  r.Register("", "Mean", 6, [](const NodeInfo&) {
    return MakeVariadic([](auto a, auto b) { return a + b; }, true);
  });
  r.Register("", "Max", 6, [](const NodeInfo&) {
    return MakeVariadic([](auto a, auto b) { return (a > b || IsNan(a)) ? a : b; });
  });
  r.Register("", "Min", 6, [](const NodeInfo&) {
    return MakeVariadic([](auto a, auto b) { return (a < b || IsNan(a)) ? a : b; });
  });

  r.Register("", "Where", 9, [](const NodeInfo&) {
    return Result<std::unique_ptr<Kernel>>(std::make_unique<WhereKernel>());
  });
  r.Register("", "Cast", 6, &CreateCast);
  r.Register("", "CastLike", 15, &CreateCastLike);
}

#undef EPCTX_FLOAT_FN

}  // namespace epctx::exec::kernels
