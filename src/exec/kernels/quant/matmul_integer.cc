// MatMulInteger: int32 Y = (A - a_zero_point) x (B - b_zero_point) with MatMul's shapes, A and
// B uint8 or int8.
#include <memory>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/quant/int_operands.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class MatMulIntegerKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo&) {
    return std::unique_ptr<Kernel>(new MatMulIntegerKernel());
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, "A"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1, "B"));
    EPCTX_ASSIGN_OR_RETURN(WidenedOperands w,
                           WidenMatMulOperands(*a, ctx.input(2), *b, ctx.input(3)));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kInt32, w.plan.out_shape));
    if (y->element_count() == 0) return Status::Ok();
    IntMatMul(w.plan, w.a.data(), w.b.data(), y->mutable_data_as<int32_t>(), ctx.num_threads());
    return Status::Ok();
  }

 private:
  MatMulIntegerKernel() = default;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateMatMulInteger(const NodeInfo& node) {
  return MatMulIntegerKernel::Create(node);
}

}  // namespace epctx::exec::kernels
