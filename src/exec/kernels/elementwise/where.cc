// Where(condition, X, Y): X where condition, else Y, the three broadcast together numpy-style; X
// and Y of any type, strings included.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "exec/kernels/common/broadcast.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/elementwise/element_types.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::elementwise {
namespace {

template <typename T>
Status WhereApply(const Tensor& c, const Tensor& x, const Tensor& yv, Tensor& out) {
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
  return Status::Ok();
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
    // Nothing to compute; the strides of an empty output's other dims could overflow.
    if (out->element_count() == 0) return Status::Ok();
    if (x->dtype() == DataType::kString) return WhereApply<std::string>(*c, *x, *y, *out);
    // Any fixed-size type: elements are copied as unsigned integers of their size.
    const size_t size = DataTypeSize(x->dtype());
    if (size == 1) return WhereApply<uint8_t>(*c, *x, *y, *out);
    if (size == 2) return WhereApply<uint16_t>(*c, *x, *y, *out);
    if (size == 4) return WhereApply<uint32_t>(*c, *x, *y, *out);
    if (size == 8) return WhereApply<uint64_t>(*c, *x, *y, *out);
    return UnsupportedType(x->dtype());
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateWhere(const NodeInfo&) {
  return std::unique_ptr<Kernel>(new WhereKernel());
}

}  // namespace epctx::exec::kernels::elementwise
