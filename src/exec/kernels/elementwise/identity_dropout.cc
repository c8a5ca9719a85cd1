// Identity, and Dropout: in inference mode (or training mode with ratio 0) an identity with an
// all-kept mask; in training mode, elements dropped at random (seeded: reproducibly).
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <type_traits>

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

// Uniform doubles in [0, 1) from MT19937 (std::mt19937's algorithm and seeding), 53 bits from
// two draws as the reference MT19937's genrand_res53 makes them. NumPy's legacy generator is the
// same, so a seeded Dropout draws what ONNX's reference implementation draws.
class UniformDraws {
 public:
  explicit UniformDraws(uint32_t seed) : engine_(seed) {}
  double Next() {
    const uint32_t a = static_cast<uint32_t>(engine_()) >> 5;
    const uint32_t b = static_cast<uint32_t>(engine_()) >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
  }

 private:
  std::mt19937 engine_;
};

// y = x * keep / (1 - ratio), keep[i] = draw[i] >= ratio, draws in element order.
template <typename T>
void DropWithDraws(const Tensor& x, double ratio, UniformDraws& draws, Tensor& y, Tensor* mask) {
  const T* in = x.data_as<T>();
  T* out = y.mutable_data_as<T>();
  bool* keep = mask != nullptr ? mask->mutable_data_as<bool>() : nullptr;
  const double scale = 1.0 / (1.0 - ratio);
  for (int64_t i = 0; i < x.element_count(); ++i) {
    const bool kept = draws.Next() >= ratio;
    if constexpr (std::is_same_v<T, Half>) {
      out[i] = FloatToHalf(kept ? static_cast<float>(HalfToFloat(in[i]) * scale) : 0.0f);
    } else {
      out[i] = kept ? static_cast<T>(in[i] * scale) : T(0) * in[i];  // keeps the sign of zero
    }
    if (keep != nullptr) keep[i] = kept;
  }
}

class DropoutKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, MaskKind mask_kind) {
    auto kernel = std::unique_ptr<DropoutKernel>(new DropoutKernel());
    kernel->mask_kind_ = mask_kind;
    kernel->want_mask_ = OutputPresent(node, 1);
    if (const AttributeValue* seed = node.attrs->Find("seed"); seed != nullptr) {
      kernel->seed_ = static_cast<uint32_t>(
          seed->type == AttrType::kFloat ? static_cast<int64_t>(seed->f) : seed->i);
      kernel->seeded_ = true;
    } else {
      kernel->unseeded_ = std::make_unique<UniformDraws>(std::random_device()());
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "data"));
    bool training = false;
    double ratio = 0;
    if (ctx.input_count() > 2) {
      EPCTX_ASSIGN_OR_RETURN(training, TrainingMode(ctx.input(2)));
      EPCTX_ASSIGN_OR_RETURN(ratio, Ratio(ctx.input(1)));
    }
    if (training && ratio != 0.0) return RunTraining(ctx, *x, ratio);
    EPCTX_RETURN_IF_ERROR(ViewOrCopy(ctx, 0, 0, *x, x->shape()));
    if (!want_mask_) return Status::Ok();
    const DataType type = mask_kind_ == MaskKind::kBool ? DataType::kBool : x->dtype();
    EPCTX_ASSIGN_OR_RETURN(Tensor * mask, ctx.AllocateOutput(1, type, x->shape()));
    return FillKeptMask(*mask);
  }

 private:
  DropoutKernel() = default;

  // Training mode (opset 12+, where the mask is bool): elements dropped at random. A seeded node
  // draws anew from its seed every run, so its output is reproducible; an unseeded one continues
  // one generator seeded from std::random_device.
  Status RunTraining(KernelContext& ctx, const Tensor& x, double ratio) {
    if (!(ratio > 0.0 && ratio < 1.0)) {
      return EPCTX_ERROR(kInvalidArgument, "ratio {} is outside [0, 1)", ratio);
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.dtype(), x.shape()));
    Tensor* mask = nullptr;
    if (want_mask_) {
      EPCTX_ASSIGN_OR_RETURN(mask, ctx.AllocateOutput(1, DataType::kBool, x.shape()));
    }
    std::optional<UniformDraws> fresh;
    std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
    UniformDraws* draws = nullptr;
    if (seeded_) {
      draws = &fresh.emplace(seed_);
    } else {
      lock.lock();
      draws = unseeded_.get();
    }
    switch (x.dtype()) {
      case DataType::kFloat32:
        DropWithDraws<float>(x, ratio, *draws, *y, mask);
        return Status::Ok();
      case DataType::kFloat64:
        DropWithDraws<double>(x, ratio, *draws, *y, mask);
        return Status::Ok();
      case DataType::kFloat16:
        DropWithDraws<Half>(x, ratio, *draws, *y, mask);
        return Status::Ok();
      default:
        return EPCTX_ERROR(kUnsupported, "training-mode Dropout of {} is not supported",
                           DataTypeName(x.dtype()));
    }
  }

  MaskKind mask_kind_ = MaskKind::kBool;
  bool want_mask_ = false;
  bool seeded_ = false;
  uint32_t seed_ = 0;
  std::mutex mutex_;  // guards unseeded_ (runs of one kernel may overlap)
  std::unique_ptr<UniformDraws> unseeded_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateIdentity(const NodeInfo& node) {
  return IdentityKernel::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateDropout(const NodeInfo& node) {
  return DropoutKernel::Create(node, node.opset >= 10 ? MaskKind::kBool : MaskKind::kSameAsInput);
}

}  // namespace epctx::exec::kernels::elementwise
