// QLinearConv: y = saturate(round((conv(x - x_zp, w - w_zp) + B) * x_scale * w_scale / y_scale)
// + y_zp), w_scale and w_zp per tensor or per output channel, B int32. 8-bit types.
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/quant/int_conv.h"
#include "exec/kernels/quant/quant_params.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

template <typename Q>
void RequantizeChannels(const std::vector<int32_t>& acc, int64_t channels, int64_t plane,
                        const std::vector<float>& scale, const int32_t* bias, int32_t zero_point,
                        Q* y) {
  const int64_t planes = static_cast<int64_t>(acc.size()) / plane;
  for (int64_t p = 0; p < planes; ++p) {
    const int64_t m = p % channels;
    const float s = scale[static_cast<size_t>(m)];
    const int32_t b = bias != nullptr ? bias[m] : 0;
    const int32_t* a = acc.data() + p * plane;
    Q* out = y + p * plane;
    for (int64_t i = 0; i < plane; ++i) {
      out[i] = SaturateRound<Q>(static_cast<float>(a[i] + b) * s, zero_point);
    }
  }
}

class QLinearConvKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<QLinearConvKernel>(new QLinearConvKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->window_, ParseWindowAttrs(*node.attrs));
    EPCTX_ASSIGN_OR_RETURN(kernel->group_, node.attrs->GetInt("group", 1));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const char* names[] = {"x",       "x_scale",      "x_zero_point", "w",
                           "w_scale", "w_zero_point", "y_scale",      "y_zero_point"};
    const Tensor* in[8];
    for (size_t i = 0; i < 8; ++i) {
      if (i == 2 || i == 5 || i == 7) {
        in[i] = ctx.input(i);
        continue;
      }
      EPCTX_ASSIGN_OR_RETURN(in[i], RequiredInput(ctx, i, names[i]));
    }
    const Tensor* bias = ctx.input(8);
    const Tensor& x = *in[0];
    const Tensor& w = *in[3];
    EPCTX_RETURN_IF_ERROR(Expect8Bit(x, "x"));
    EPCTX_RETURN_IF_ERROR(Expect8Bit(w, "w"));
    EPCTX_ASSIGN_OR_RETURN(ConvShape p, ResolveConvShape(window_, group_, x.shape(), w.shape()));
    EPCTX_ASSIGN_OR_RETURN(DataType out_type, QuantizedType(in[7], "y_zero_point"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<float> x_scale, ReadScales(*in[1], "x_scale"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<float> w_scale, ReadScales(*in[4], "w_scale"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<float> y_scale, ReadScales(*in[6], "y_scale"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int32_t> xzp, ReadZeroPoints(in[2], "x_zero_point"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int32_t> wzp, ReadZeroPoints(in[5], "w_zero_point"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int32_t> yzp, ReadZeroPoints(in[7], "y_zero_point"));
    if (x_scale.size() != 1 || xzp.size() != 1 || y_scale.size() != 1 || yzp.size() != 1) {
      return EPCTX_ERROR(kInvalidArgument,
                         "x_scale, x_zero_point, y_scale and y_zero_point must be single values");
    }
    EPCTX_ASSIGN_OR_RETURN(w_scale, SpreadParameter(std::move(w_scale), p.out_channels, "w_scale"));
    EPCTX_ASSIGN_OR_RETURN(wzp, SpreadParameter(std::move(wzp), p.out_channels, "w_zero_point"));
    if (bias != nullptr) {
      if (bias->dtype() != DataType::kInt32) {
        return EPCTX_ERROR(kUnsupported, "input B has type {}, expected int32",
                           DataTypeName(bias->dtype()));
      }
      if (bias->shape().size() != 1 || bias->shape()[0] != p.out_channels) {
        return EPCTX_ERROR(kInvalidArgument, "input B has shape {}, expected [{}]",
                           ShapeToString(bias->shape()), p.out_channels);
      }
    }
    std::vector<float> scale(static_cast<size_t>(p.out_channels));
    for (size_t m = 0; m < scale.size(); ++m) scale[m] = x_scale[0] * w_scale[m] / y_scale[0];
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out_type, p.output_shape()));
    if (y->element_count() == 0) return Status::Ok();
    std::vector<int32_t> xw(static_cast<size_t>(x.element_count()));
    std::vector<int32_t> ww(static_cast<size_t>(w.element_count()));
    WidenMinusZeroPoint(x, xzp, 1, xw.data());
    EPCTX_ASSIGN_OR_RETURN(const int64_t w_inner,
                           CheckedDimProduct(w.shape(), 1, w.shape().size()));
    WidenMinusZeroPoint(w, wzp, w_inner, ww.data());
    std::vector<int32_t> acc(static_cast<size_t>(y->element_count()));
    IntConv(p, xw.data(), ww.data(), acc.data(), ctx.num_threads());
    const int64_t plane = p.window.out_size();
    const int32_t* bp = bias != nullptr ? bias->data_as<int32_t>() : nullptr;
    if (out_type == DataType::kUint8) {
      RequantizeChannels(acc, p.out_channels, plane, scale, bp, yzp[0],
                         y->mutable_data_as<uint8_t>());
    } else {
      RequantizeChannels(acc, p.out_channels, plane, scale, bp, yzp[0],
                         y->mutable_data_as<int8_t>());
    }
    return Status::Ok();
  }

 private:
  QLinearConvKernel() = default;
  WindowAttrs window_;
  int64_t group_ = 1;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateQLinearConv(const NodeInfo& node) {
  return QLinearConvKernel::Create(node);
}

}  // namespace epctx::exec::kernels
