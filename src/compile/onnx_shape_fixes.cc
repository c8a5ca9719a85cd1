#include "compile/onnx_shape_fixes.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <cstring>
#include <mutex>
#include <optional>

namespace epctx::compile {
namespace {

// The value of a one-element int32 or int64 initializer or Constant; nullopt when it is not one.
std::optional<int64_t> ScalarInt(const onnx::TensorProto* t) {
  if (t == nullptr) return std::nullopt;
  for (int64_t d : t->dims()) {
    if (d != 1) return std::nullopt;
  }
  if (t->data_type() == onnx::TensorProto::INT64) {
    if (t->raw_data().size() == sizeof(int64_t)) {
      int64_t v;
      std::memcpy(&v, t->raw_data().data(), sizeof v);
      return v;
    }
    if (t->raw_data().empty() && t->int64_data_size() == 1) return t->int64_data(0);
  }
  if (t->data_type() == onnx::TensorProto::INT32) {
    if (t->raw_data().size() == sizeof(int32_t)) {
      int32_t v;
      std::memcpy(&v, t->raw_data().data(), sizeof v);
      return v;
    }
    if (t->raw_data().empty() && t->int32_data_size() == 1) return t->int32_data(0);
  }
  return std::nullopt;
}

bool HasInput(onnx::InferenceContext& ctx, size_t n) {
  return ctx.getNumInputs() > n && ctx.getInputType(n) != nullptr;
}

// STFT-17: signal [batch, length, 1 | 2], frame_step, window [frame]?, frame_length?
//   -> [batch, frames, bins, 2].
void InferStft(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const onnx::TensorShapeProto& signal = onnx::getInputShape(ctx, 0);
  if (signal.dim_size() != 3) {
    fail_shape_inference("STFT: the signal must have rank 3 ([batch, length, 1 or 2]), not ",
                         signal.dim_size());
  }
  const int64_t onesided = onnx::getAttribute(ctx, "onesided", 1);
  if (onesided != 0 && signal.dim(2).has_dim_value() && signal.dim(2).dim_value() == 2) {
    fail_shape_inference("STFT: a onesided transform needs a real signal (last dim 1)");
  }
  std::optional<int64_t> step = ScalarInt(ctx.getInputData(1));
  if (step && *step <= 0) fail_shape_inference("STFT: frame_step must be positive, not ", *step);

  std::optional<int64_t> window;
  if (HasInput(ctx, 2) && onnx::hasInputShape(ctx, 2)) {
    const onnx::TensorShapeProto& w = onnx::getInputShape(ctx, 2);
    if (w.dim_size() != 1) fail_shape_inference("STFT: the window must have rank 1");
    if (w.dim(0).has_dim_value()) window = w.dim(0).dim_value();
  }
  std::optional<int64_t> frame = HasInput(ctx, 3) ? ScalarInt(ctx.getInputData(3)) : std::nullopt;
  if (frame && window && *frame != *window) {
    fail_shape_inference("STFT: frame_length ", *frame, " differs from the window's length ",
                         *window);
  }
  if (!frame) frame = window;
  if (frame && *frame <= 0) fail_shape_inference("STFT: the frame length must be positive");

  onnx::TensorShapeProto* out = onnx::getOutputShape(ctx, 0);
  out->clear_dim();
  *out->add_dim() = signal.dim(0);
  onnx::TensorShapeProto::Dimension* frames = out->add_dim();
  if (frame && step && signal.dim(1).has_dim_value()) {
    const int64_t length = signal.dim(1).dim_value();
    if (*frame > length) {
      fail_shape_inference("STFT: the frame length ", *frame, " exceeds the signal length ",
                           length);
    }
    frames->set_dim_value((length - *frame) / *step + 1);
  }
  onnx::TensorShapeProto::Dimension* bins = out->add_dim();
  if (frame) bins->set_dim_value(onesided != 0 ? *frame / 2 + 1 : *frame);
  out->add_dim()->set_dim_value(2);
}

void Install() {
  // Schemas live in a static, non-const registry map; the registry hands out const pointers.
  auto* stft = const_cast<onnx::OpSchema*>(onnx::OpSchemaRegistry::Schema("STFT", 17, ""));
  if (stft != nullptr && stft->SinceVersion() == 17) stft->TypeAndShapeInferenceFunction(InferStft);
}

}  // namespace

void InstallShapeInferenceFixes() {
  static std::once_flag once;
  std::call_once(once, Install);
}

}  // namespace epctx::compile
