// MaxUnpool: scatters X into zeros at the flat positions `I` (as MaxPool's Indices give them)
// of the unpooled shape (in - 1) * stride + kernel - pads. When output_shape asks for a larger
// output, the unpooled result sits at its start and the rest is zeros, as in ONNX Runtime.
// float32.
#include <algorithm>
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/nn/window.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class MaxUnpoolKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<MaxUnpoolKernel>(new MaxUnpoolKernel());
    EPCTX_ASSIGN_OR_RETURN(const AttributeValue* k,
                           node.attrs->Require("kernel_shape", AttrType::kInts));
    kernel->window_.kernel_shape.assign(k->ints.begin(), k->ints.end());
    EPCTX_ASSIGN_OR_RETURN(kernel->window_.strides, node.attrs->GetInts("strides"));
    EPCTX_ASSIGN_OR_RETURN(kernel->window_.pads, node.attrs->GetInts("pads"));
    EPCTX_RETURN_IF_ERROR(
        ValidateWindowAttrs(kernel->window_, kernel->window_.kernel_shape.size()));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kInt64, "I"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 1, "I"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*indices, DataType::kInt64, "I"));
    const size_t spatial = window_.kernel_shape.size();
    EPCTX_RETURN_IF_ERROR(ExpectRank(*x, spatial + 2, "X"));
    const std::vector<int64_t>& xs = x->shape();
    if (indices->shape() != xs) {
      return EPCTX_ERROR(kInvalidArgument, "input I has shape {}, expected {} (that of X)",
                         ShapeToString(indices->shape()), ShapeToString(xs));
    }
    std::vector<int64_t> unpooled{xs[0], xs[1]};
    for (size_t i = 0; i < spatial; ++i) {
      const int64_t s = window_.strides.empty() ? 1 : window_.strides[i];
      const int64_t pads = window_.pads.empty() ? 0 : window_.pads[i] + window_.pads[spatial + i];
      int64_t out = 0;
      if (__builtin_mul_overflow(xs[2 + i] - 1, s, &out) ||
          __builtin_add_overflow(out, window_.kernel_shape[i], &out) ||
          __builtin_sub_overflow(out, pads, &out)) {
        return EPCTX_ERROR(kInvalidArgument, "spatial dim {} of the output overflows int64", i);
      }
      if (out < 0) {
        return EPCTX_ERROR(kInvalidArgument, "spatial dim {} of the output would be {}", i, out);
      }
      unpooled.push_back(out);
    }
    std::vector<int64_t> out_shape = unpooled;
    if (const Tensor* given = ctx.input(2); given != nullptr) {
      EPCTX_ASSIGN_OR_RETURN(out_shape, ReadIndexVector(*given, "output_shape"));
      if (out_shape.size() != xs.size() || out_shape[0] != xs[0] || out_shape[1] != xs[1]) {
        return EPCTX_ERROR(kInvalidArgument, "output_shape {} does not fit X of shape {}",
                           ShapeToString(out_shape), ShapeToString(xs));
      }
      for (size_t d = 2; d < out_shape.size(); ++d) {
        if (out_shape[d] < unpooled[d]) {
          return EPCTX_ERROR(kInvalidArgument, "output_shape {} is smaller than the unpooled {}",
                             ShapeToString(out_shape), ShapeToString(unpooled));
        }
      }
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, out_shape));
    float* yp = y->mutable_data_as<float>();
    std::fill(yp, yp + y->element_count(), 0.0f);
    EPCTX_ASSIGN_OR_RETURN(const int64_t total, CheckedDimProduct(unpooled));
    const float* xp = x->data_as<float>();
    const int64_t* ip = indices->data_as<int64_t>();
    for (int64_t i = 0; i < x->element_count(); ++i) {
      const int64_t flat = ip[i];
      if (flat < 0 || flat >= total) {
        return EPCTX_ERROR(kInvalidArgument, "index {} is outside the unpooled shape {}", flat,
                           ShapeToString(unpooled));
      }
      // The same coordinates in the (possibly larger) output.
      int64_t rest = flat, offset = 0, stride = 1;
      for (size_t d = unpooled.size(); d-- > 0;) {
        offset += (rest % unpooled[d]) * stride;
        rest /= unpooled[d];
        stride *= out_shape[d];
      }
      yp[offset] = xp[i];
    }
    return Status::Ok();
  }

 private:
  MaxUnpoolKernel() = default;
  WindowAttrs window_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateMaxUnpool(const NodeInfo& node) {
  return MaxUnpoolKernel::Create(node);
}

}  // namespace epctx::exec::kernels
