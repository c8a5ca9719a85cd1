// QLinearMatMul: y = saturate(round((A - a_zp) x (B - b_zp) * a_scale * b_scale / y_scale) +
// y_zp), scales and zero points per tensor, or per row of A / per column of B. 8-bit types.
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/quant/int_operands.h"
#include "exec/kernels/quant/quant_params.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

template <typename Q>
void Requantize(const std::vector<int32_t>& acc, int64_t m, int64_t n,
                const std::vector<float>& row_scale, const std::vector<float>& col_scale,
                float y_scale, int32_t zero_point, Q* y) {
  const int64_t matrices = static_cast<int64_t>(acc.size()) / (m * n);
  for (int64_t mat = 0; mat < matrices; ++mat) {
    for (int64_t i = 0; i < m; ++i) {
      const int32_t* a = acc.data() + (mat * m + i) * n;
      Q* out = y + (mat * m + i) * n;
      const float rs = row_scale[static_cast<size_t>(i)];
      for (int64_t j = 0; j < n; ++j) {
        const float scale = rs * col_scale[static_cast<size_t>(j)] / y_scale;
        out[j] = SaturateRound<Q>(static_cast<float>(a[j]) * scale, zero_point);
      }
    }
  }
}

class QLinearMatMulKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo&) {
    return std::unique_ptr<Kernel>(new QLinearMatMulKernel());
  }

  Status Run(KernelContext& ctx) override {
    const char* names[] = {"a",       "a_scale",      "a_zero_point", "b",
                           "b_scale", "b_zero_point", "y_scale",      "y_zero_point"};
    const Tensor* in[8];
    for (size_t i = 0; i < 8; ++i) {
      if (i == 2 || i == 5 || i == 7) {
        in[i] = ctx.input(i);
        continue;
      }
      EPCTX_ASSIGN_OR_RETURN(in[i], RequiredInput(ctx, i, names[i]));
    }
    EPCTX_ASSIGN_OR_RETURN(WidenedOperands w, WidenMatMulOperands(*in[0], in[2], *in[3], in[5]));
    EPCTX_ASSIGN_OR_RETURN(DataType out_type, QuantizedType(in[7], "y_zero_point"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<float> a_scale, ReadScales(*in[1], "a_scale"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<float> b_scale, ReadScales(*in[4], "b_scale"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<float> y_scale, ReadScales(*in[6], "y_scale"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int32_t> y_zp, ReadZeroPoints(in[7], "y_zero_point"));
    if (y_scale.size() != 1 || y_zp.size() != 1) {
      return EPCTX_ERROR(kInvalidArgument, "y_scale and y_zero_point must be single values");
    }
    EPCTX_ASSIGN_OR_RETURN(a_scale, SpreadParameter(std::move(a_scale), w.plan.m, "a_scale"));
    EPCTX_ASSIGN_OR_RETURN(b_scale, SpreadParameter(std::move(b_scale), w.plan.n, "b_scale"));
    EPCTX_ASSIGN_OR_RETURN(const int64_t out_count, CheckedDimProduct(w.plan.out_shape));
    std::vector<int32_t> acc(static_cast<size_t>(out_count));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out_type, w.plan.out_shape));
    if (acc.empty()) return Status::Ok();
    IntMatMul(w.plan, w.a.data(), w.b.data(), acc.data(), ctx.num_threads());
    if (out_type == DataType::kUint8) {
      Requantize(acc, w.plan.m, w.plan.n, a_scale, b_scale, y_scale[0], y_zp[0],
                 y->mutable_data_as<uint8_t>());
    } else {
      Requantize(acc, w.plan.m, w.plan.n, a_scale, b_scale, y_scale[0], y_zp[0],
                 y->mutable_data_as<int8_t>());
    }
    return Status::Ok();
  }

 private:
  QLinearMatMulKernel() = default;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateQLinearMatMul(const NodeInfo& node) {
  return QLinearMatMulKernel::Create(node);
}

}  // namespace epctx::exec::kernels
