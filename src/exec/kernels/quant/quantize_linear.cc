// QuantizeLinear y = saturate(round(x / scale) + zero_point) and DequantizeLinear
// y = (x - zero_point) * scale, per tensor (scalar scale) or, from opset 13, per slice along
// `axis` (1-D scale). Quantized types: uint8 and int8 (and int32 for DequantizeLinear).
#include <memory>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/quant/quant_params.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// Elements i of x use parameter (i / inner) % scale.size().
struct ParamLayout {
  std::vector<float> scale;
  std::vector<int32_t> zero_point;
  int64_t inner = 1;
};

Result<ParamLayout> ReadParams(const Tensor& x, const Tensor& scale, const Tensor* zero_point,
                               int64_t axis_attr, bool per_axis_allowed) {
  ParamLayout p;
  EPCTX_ASSIGN_OR_RETURN(p.scale, ReadScales(scale, "scale"));
  EPCTX_ASSIGN_OR_RETURN(p.zero_point, ReadZeroPoints(zero_point, "zero_point"));
  const int64_t count = static_cast<int64_t>(p.scale.size());
  if (count == 1) {
    if (p.zero_point.size() != 1) {
      return EPCTX_ERROR(kInvalidArgument, "zero_point has {} values, scale has 1",
                         p.zero_point.size());
    }
    return p;
  }
  if (!per_axis_allowed || scale.shape().size() != 1) {
    return EPCTX_ERROR(kInvalidArgument, "scale has shape {}, expected a scalar",
                       ShapeToString(scale.shape()));
  }
  const std::vector<int64_t>& xs = x.shape();
  EPCTX_ASSIGN_OR_RETURN(int64_t axis,
                         NormalizeAxis(axis_attr, static_cast<int64_t>(xs.size()), "axis"));
  if (xs[static_cast<size_t>(axis)] != count) {
    return EPCTX_ERROR(kInvalidArgument, "scale has {} values, input dim {} is {}", count, axis,
                       xs[static_cast<size_t>(axis)]);
  }
  EPCTX_ASSIGN_OR_RETURN(p.zero_point,
                         SpreadParameter(std::move(p.zero_point), count, "zero_point"));
  EPCTX_ASSIGN_OR_RETURN(p.inner, CheckedDimProduct(xs, static_cast<size_t>(axis) + 1, xs.size()));
  return p;
}

// Opset 21's blocked quantization and explicit output type are not implemented.
Status CheckLaterOpsetAttrs(const Attributes& attrs) {
  EPCTX_ASSIGN_OR_RETURN(int64_t block_size, attrs.GetInt("block_size", 0));
  if (block_size != 0) {
    return EPCTX_ERROR(kUnsupported, "block_size={} (blocked quantization) is not supported",
                       block_size);
  }
  EPCTX_ASSIGN_OR_RETURN(int64_t output_dtype, attrs.GetInt("output_dtype", 0));
  if (output_dtype != 0) {
    return EPCTX_ERROR(kUnsupported, "output_dtype={} is not supported", output_dtype);
  }
  return Status::Ok();
}

template <typename Q>
void Quantize(const float* x, int64_t n, const ParamLayout& p, Q* y, int threads) {
  const int64_t groups = static_cast<int64_t>(p.scale.size());
  const int nt = ThreadsFor(threads, n);
  ParallelForRanges(nt, n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const size_t g = static_cast<size_t>((i / p.inner) % groups);
      y[i] = SaturateRound<Q>(x[i] / p.scale[g], p.zero_point[g]);
    }
  });
}

template <typename Q>
void Dequantize(const Q* x, int64_t n, const ParamLayout& p, float* y, int threads) {
  const int64_t groups = static_cast<int64_t>(p.scale.size());
  const int nt = ThreadsFor(threads, n);
  ParallelForRanges(nt, n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const size_t g = static_cast<size_t>((i / p.inner) % groups);
      y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - p.zero_point[g]) * p.scale[g];
    }
  });
}

class QuantizeLinearKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool per_axis) {
    auto kernel = std::unique_ptr<QuantizeLinearKernel>(new QuantizeLinearKernel());
    kernel->per_axis_ = per_axis;
    EPCTX_ASSIGN_OR_RETURN(kernel->axis_, node.attrs->GetInt("axis", 1));
    EPCTX_RETURN_IF_ERROR(CheckLaterOpsetAttrs(*node.attrs));
    EPCTX_ASSIGN_OR_RETURN(int64_t saturate, node.attrs->GetInt("saturate", 1));
    (void)saturate;  // only affects float8 outputs, which are not supported
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "x"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "y_scale"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "x"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* scale, RequiredInput(ctx, 1, "y_scale"));
    const Tensor* zp = ctx.input(2);
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "x"));
    EPCTX_ASSIGN_OR_RETURN(DataType out_type, QuantizedType(zp, "y_zero_point"));
    EPCTX_ASSIGN_OR_RETURN(ParamLayout p, ReadParams(*x, *scale, zp, axis_, per_axis_));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out_type, x->shape()));
    if (out_type == DataType::kUint8) {
      Quantize(x->data_as<float>(), x->element_count(), p, y->mutable_data_as<uint8_t>(),
               ctx.num_threads());
    } else {
      Quantize(x->data_as<float>(), x->element_count(), p, y->mutable_data_as<int8_t>(),
               ctx.num_threads());
    }
    return Status::Ok();
  }

 private:
  QuantizeLinearKernel() = default;
  bool per_axis_ = false;
  int64_t axis_ = 1;
};

class DequantizeLinearKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool per_axis) {
    auto kernel = std::unique_ptr<DequantizeLinearKernel>(new DequantizeLinearKernel());
    kernel->per_axis_ = per_axis;
    EPCTX_ASSIGN_OR_RETURN(kernel->axis_, node.attrs->GetInt("axis", 1));
    EPCTX_RETURN_IF_ERROR(CheckLaterOpsetAttrs(*node.attrs));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "x_scale"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "x"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* scale, RequiredInput(ctx, 1, "x_scale"));
    const Tensor* zp = ctx.input(2);
    if (zp != nullptr && zp->dtype() != x->dtype()) {
      return EPCTX_ERROR(kInvalidArgument, "input x_zero_point has type {}, x has {}",
                         DataTypeName(zp->dtype()), DataTypeName(x->dtype()));
    }
    EPCTX_ASSIGN_OR_RETURN(ParamLayout p, ReadParams(*x, *scale, zp, axis_, per_axis_));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, x->shape()));
    float* yp = y->mutable_data_as<float>();
    const int64_t n = x->element_count();
    switch (x->dtype()) {
      case DataType::kUint8:
        Dequantize(x->data_as<uint8_t>(), n, p, yp, ctx.num_threads());
        break;
      case DataType::kInt8:
        Dequantize(x->data_as<int8_t>(), n, p, yp, ctx.num_threads());
        break;
      case DataType::kInt32:
        Dequantize(x->data_as<int32_t>(), n, p, yp, ctx.num_threads());
        break;
      default:
        return EPCTX_ERROR(kUnsupported, "input x has type {}, expected uint8, int8 or int32",
                           DataTypeName(x->dtype()));
    }
    return Status::Ok();
  }

 private:
  DequantizeLinearKernel() = default;
  bool per_axis_ = false;
  int64_t axis_ = 1;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateQuantizeLinear(const NodeInfo& node) {
  return QuantizeLinearKernel::Create(node, node.opset >= 13);
}

Result<std::unique_ptr<Kernel>> CreateDequantizeLinear(const NodeInfo& node) {
  return DequantizeLinearKernel::Create(node, node.opset >= 13);
}

}  // namespace epctx::exec::kernels
