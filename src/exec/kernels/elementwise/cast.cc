// Cast and CastLike: every type to every other, through float for the 16-bit floats; to and from
// string in cast_string.cc.
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/elementwise/cast_string.h"
#include "exec/kernels/elementwise/element_types.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::elementwise {
namespace {

Status CastTensor(const Tensor& x, Tensor& y) {
  if (y.dtype() == DataType::kString) return CastToStrings(x, y);
  if (x.dtype() == DataType::kString) return CastFromStrings(x, y);
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
  return t == DataType::kString || (t != DataType::kUndefined && DataTypeSize(t) != 0);
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
    if (!Castable(x->dtype())) return UnsupportedType(x->dtype());
    if (!Castable(to)) return UnsupportedType(to);
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, to, x->shape()));
    return CastTensor(*x, *y);
  }

 private:
  DataType to_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateCast(const NodeInfo& node) {
  EPCTX_ASSIGN_OR_RETURN(const AttributeValue* to, node.attrs->Require("to", AttrType::kInt));
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

}  // namespace epctx::exec::kernels::elementwise
