// Identity, and Dropout in inference mode (or training mode with ratio 0), where it is an identity
// with an all-kept mask.
#include <algorithm>
#include <cstring>
#include <memory>

#include "exec/kernels/common/copy.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/elementwise/element_types.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::elementwise {
namespace {

class IdentityKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo&) {
    return std::unique_ptr<Kernel>(new IdentityKernel());
  }
  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    return ViewOrCopy(ctx, 0, 0, *x, x->shape());
  }
};

// How a Dropout version spells "keep everything" in its mask output.
enum class MaskKind { kSameAsInput, kBool };

Status FillKeptMask(Tensor& mask) {
  const int64_t n = mask.element_count();
  switch (mask.dtype()) {
    case DataType::kBool:
      std::memset(mask.mutable_data(), 1, static_cast<size_t>(n));
      return Status::Ok();
    case DataType::kFloat32:
      std::fill_n(mask.mutable_data_as<float>(), n, 1.0f);
      return Status::Ok();
    case DataType::kFloat64:
      std::fill_n(mask.mutable_data_as<double>(), n, 1.0);
      return Status::Ok();
    case DataType::kFloat16:
      std::fill_n(mask.mutable_data_as<uint16_t>(), n, uint16_t{0x3C00});
      return Status::Ok();
    default:
      return EPCTX_ERROR(kUnsupported, "mask output of type {} is not supported",
                         DataTypeName(mask.dtype()));
  }
}

// Reads input training_mode (a bool scalar). Absent means inference.
Result<bool> TrainingMode(const Tensor* training_mode) {
  if (training_mode == nullptr) return false;
  if (training_mode->dtype() != DataType::kBool || training_mode->element_count() != 1) {
    return EPCTX_ERROR(kInvalidArgument, "input training_mode must be a bool scalar, got {} {}",
                       DataTypeName(training_mode->dtype()), ShapeToString(training_mode->shape()));
  }
  return *training_mode->data_as<uint8_t>() != 0;
}

// Input ratio (a float scalar), 0.5 when absent.
Result<double> Ratio(const Tensor* ratio) {
  if (ratio == nullptr) return 0.5;
  if (ratio->element_count() != 1) {
    return EPCTX_ERROR(kInvalidArgument, "input ratio must be a scalar, got shape {}",
                       ShapeToString(ratio->shape()));
  }
  switch (ratio->dtype()) {
    case DataType::kFloat32:
      return static_cast<double>(*ratio->data_as<float>());
    case DataType::kFloat64:
      return *ratio->data_as<double>();
    case DataType::kFloat16:
      return static_cast<double>(HalfToFloat(*ratio->data_as<Half>()));
    default:
      return EPCTX_ERROR(kInvalidArgument, "input ratio has type {}, expected a float type",
                         DataTypeName(ratio->dtype()));
  }
}

// Training mode drops elements at random, which only ratio 0 makes deterministic (everything
// kept, so training and inference agree); any other ratio is refused rather than faked.
Status CheckDeterministic(const Tensor* ratio, const Tensor* training_mode) {
  EPCTX_ASSIGN_OR_RETURN(bool training, TrainingMode(training_mode));
  if (!training) return Status::Ok();
  EPCTX_ASSIGN_OR_RETURN(double r, Ratio(ratio));
  if (r != 0.0) {
    return EPCTX_ERROR(kUnsupported,
                       "training mode with ratio {} is not supported (its output is random; only "
                       "ratio 0 is)",
                       r);
  }
  return Status::Ok();
}

class DropoutKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, MaskKind mask_kind) {
    const bool ratio_known = !InputPresent(node, 1) || node.inputs[1].constant != nullptr;
    if (InputPresent(node, 2) && node.inputs[2].constant != nullptr && ratio_known) {
      EPCTX_RETURN_IF_ERROR(CheckDeterministic(
          InputPresent(node, 1) ? node.inputs[1].constant : nullptr, node.inputs[2].constant));
    }
    auto kernel = std::unique_ptr<DropoutKernel>(new DropoutKernel());
    kernel->mask_kind_ = mask_kind;
    kernel->want_mask_ = OutputPresent(node, 1);
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "data"));
    if (ctx.input_count() > 2) {
      EPCTX_RETURN_IF_ERROR(CheckDeterministic(ctx.input(1), ctx.input(2)));
    }
    EPCTX_RETURN_IF_ERROR(ViewOrCopy(ctx, 0, 0, *x, x->shape()));
    if (!want_mask_) return Status::Ok();
    const DataType type = mask_kind_ == MaskKind::kBool ? DataType::kBool : x->dtype();
    EPCTX_ASSIGN_OR_RETURN(Tensor * mask, ctx.AllocateOutput(1, type, x->shape()));
    return FillKeptMask(*mask);
  }

 private:
  DropoutKernel() = default;
  MaskKind mask_kind_ = MaskKind::kBool;
  bool want_mask_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateIdentity(const NodeInfo& node) {
  return IdentityKernel::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateDropout(const NodeInfo& node) {
  return DropoutKernel::Create(node, node.opset >= 10 ? MaskKind::kBool : MaskKind::kSameAsInput);
}

}  // namespace epctx::exec::kernels::elementwise
