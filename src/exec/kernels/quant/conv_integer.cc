// ConvInteger: int32 y = conv(x - x_zero_point, w - w_zero_point), x and w uint8 or int8,
// w_zero_point per tensor or per output channel.
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/quant/int_conv.h"
#include "exec/kernels/quant/quant_params.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class ConvIntegerKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<ConvIntegerKernel>(new ConvIntegerKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->window_, ParseWindowAttrs(*node.attrs));
    EPCTX_ASSIGN_OR_RETURN(kernel->group_, node.attrs->GetInt("group", 1));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "x"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1, "w"));
    EPCTX_RETURN_IF_ERROR(Expect8Bit(*x, "x"));
    EPCTX_RETURN_IF_ERROR(Expect8Bit(*w, "w"));
    EPCTX_ASSIGN_OR_RETURN(ConvShape p, ResolveConvShape(window_, group_, x->shape(), w->shape()));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int32_t> xzp, ReadZeroPoints(ctx.input(2), "x_zero_point"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int32_t> wzp, ReadZeroPoints(ctx.input(3), "w_zero_point"));
    if (xzp.size() != 1) {
      return EPCTX_ERROR(kInvalidArgument, "x_zero_point has {} values, expected 1", xzp.size());
    }
    EPCTX_ASSIGN_OR_RETURN(wzp, SpreadParameter(std::move(wzp), p.out_channels, "w_zero_point"));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kInt32, p.output_shape()));
    if (y->element_count() == 0) return Status::Ok();
    std::vector<int32_t> xw(static_cast<size_t>(x->element_count()));
    std::vector<int32_t> ww(static_cast<size_t>(w->element_count()));
    WidenMinusZeroPoint(*x, xzp, 1, xw.data());
    EPCTX_ASSIGN_OR_RETURN(const int64_t w_inner,
                           CheckedDimProduct(w->shape(), 1, w->shape().size()));
    WidenMinusZeroPoint(*w, wzp, w_inner, ww.data());
    IntConv(p, xw.data(), ww.data(), y->mutable_data_as<int32_t>(), ctx.num_threads());
    return Status::Ok();
  }

 private:
  ConvIntegerKernel() = default;
  WindowAttrs window_;
  int64_t group_ = 1;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateConvInteger(const NodeInfo& node) {
  return ConvIntegerKernel::Create(node);
}

}  // namespace epctx::exec::kernels
