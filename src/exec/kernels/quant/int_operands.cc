#include "exec/kernels/quant/int_operands.h"

#include "exec/kernels/quant/quant_params.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {

Result<WidenedOperands> WidenMatMulOperands(const Tensor& a, const Tensor* a_zero_point,
                                            const Tensor& b, const Tensor* b_zero_point) {
  EPCTX_RETURN_IF_ERROR(Expect8Bit(a, "A"));
  EPCTX_RETURN_IF_ERROR(Expect8Bit(b, "B"));
  for (const auto& [zp, t, name] : {std::tuple{a_zero_point, &a, "a_zero_point"},
                                    std::tuple{b_zero_point, &b, "b_zero_point"}}) {
    if (zp != nullptr && zp->dtype() != t->dtype()) {
      return EPCTX_ERROR(kInvalidArgument, "input {} has type {}, its operand {}", name,
                         DataTypeName(zp->dtype()), DataTypeName(t->dtype()));
    }
  }
  WidenedOperands w;
  EPCTX_ASSIGN_OR_RETURN(w.plan, PlanIntMatMul(a.shape(), b.shape()));
  EPCTX_ASSIGN_OR_RETURN(std::vector<int32_t> azp, ReadZeroPoints(a_zero_point, "a_zero_point"));
  EPCTX_ASSIGN_OR_RETURN(std::vector<int32_t> bzp, ReadZeroPoints(b_zero_point, "b_zero_point"));
  if (azp.size() != 1 && azp.size() != static_cast<size_t>(w.plan.m)) {
    return EPCTX_ERROR(kInvalidArgument, "a_zero_point has {} values, expected 1 or {}", azp.size(),
                       w.plan.m);
  }
  if (bzp.size() != 1 && bzp.size() != static_cast<size_t>(w.plan.n)) {
    return EPCTX_ERROR(kInvalidArgument, "b_zero_point has {} values, expected 1 or {}", bzp.size(),
                       w.plan.n);
  }
  w.a.resize(static_cast<size_t>(a.element_count()));
  w.b.resize(static_cast<size_t>(b.element_count()));
  WidenMinusZeroPoint(a, azp, w.plan.k, w.a.data());
  WidenMinusZeroPoint(b, bzp, 1, w.b.data());
  return w;
}

}  // namespace epctx::exec::kernels
