// Clip: bounds are attributes before opset 11 and optional scalar inputs from 11 on; from 12 on
// every numeric type is accepted (float32 takes the vectorized activation path).
#include <algorithm>
#include <limits>
#include <memory>

#include "exec/kernels/common/activation.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/elementwise/element_types.h"
#include "exec/kernels/elementwise/unary_float.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::elementwise {
namespace {

// Bound input `index` as a T, or `fallback` when omitted.
template <typename T>
Result<T> BoundInput(const KernelContext& ctx, size_t index, const char* name, DataType dtype,
                     T fallback) {
  const Tensor* t = ctx.input(index);
  if (t == nullptr) return fallback;
  if (t->dtype() != dtype) {
    return EPCTX_ERROR(kInvalidArgument, "input {} has type {}, expected {} like the input", name,
                       DataTypeName(t->dtype()), DataTypeName(dtype));
  }
  if (t->element_count() != 1) {
    return EPCTX_ERROR(kInvalidArgument, "input {} has shape {}, expected a scalar", name,
                       ShapeToString(t->shape()));
  }
  return *t->data_as<T>();
}

// One type other than float32; 16-bit floats are compared in float.
template <typename T>
Status ClipTyped(KernelContext& ctx, const Tensor& x) {
  using C = Compute<T>;
  EPCTX_ASSIGN_OR_RETURN(T lo_bound, BoundInput<T>(ctx, 1, "min", x.dtype(),
                                                   Store<T>(std::numeric_limits<C>::lowest())));
  EPCTX_ASSIGN_OR_RETURN(
      T hi_bound, BoundInput<T>(ctx, 2, "max", x.dtype(), Store<T>(std::numeric_limits<C>::max())));
  const C lo = Load(lo_bound);
  const C hi = Load(hi_bound);
  EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.dtype(), x.shape()));
  const T* in = x.data_as<T>();
  T* out = y->mutable_data_as<T>();
  for (int64_t i = 0; i < x.element_count(); ++i) {
    out[i] = Store<T>(std::min(std::max(Load(in[i]), lo), hi));
  }
  return Status::Ok();
}

class ClipKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool bounds_are_inputs) {
    auto kernel = std::unique_ptr<ClipKernel>(new ClipKernel());
    kernel->bounds_are_inputs_ = bounds_are_inputs;
    if (!bounds_are_inputs) {
      EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "input"));
      EPCTX_ASSIGN_OR_RETURN(kernel->lo_,
                             node.attrs->GetFloat("min", std::numeric_limits<float>::lowest()));
      EPCTX_ASSIGN_OR_RETURN(kernel->hi_,
                             node.attrs->GetFloat("max", std::numeric_limits<float>::max()));
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    if (x->dtype() != DataType::kFloat32 && bounds_are_inputs_) {
      return Visit(x->dtype(), [&](auto tag) -> Status {
        using T = typename decltype(tag)::type;
        if constexpr (kInSet<TypeSet::kNumeric, T>) {
          return ClipTyped<T>(ctx, *x);
        } else {
          return EPCTX_ERROR(kUnsupported, "input has type {}, expected a numeric type",
                             DataTypeName(x->dtype()));
        }
      });
    }
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "input"));
    Activation act;
    act.kind = Activation::Kind::kClip;
    act.lo = lo_;
    act.hi = hi_;
    if (bounds_are_inputs_) {
      EPCTX_ASSIGN_OR_RETURN(act.lo, BoundInput<float>(ctx, 1, "min", DataType::kFloat32,
                                                       std::numeric_limits<float>::lowest()));
      EPCTX_ASSIGN_OR_RETURN(act.hi, BoundInput<float>(ctx, 2, "max", DataType::kFloat32,
                                                       std::numeric_limits<float>::max()));
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, x->shape()));
    ParallelMap(
        x->data_as<float>(), y->mutable_data_as<float>(), x->element_count(), ctx.num_threads(),
        [&act](const float* in, float* out, int64_t n) { ApplyActivation(act, in, out, n); });
    return Status::Ok();
  }

 private:
  ClipKernel() = default;
  bool bounds_are_inputs_ = false;
  float lo_ = 0;
  float hi_ = 0;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateClip(const NodeInfo& node) {
  return ClipKernel::Create(node, node.opset >= 11);
}

}  // namespace epctx::exec::kernels::elementwise
