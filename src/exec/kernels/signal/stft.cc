// STFT: the DFT of every frame_length-long frame of a real [batch, length, 1] or complex
// [batch, length, 2] signal, frames starting every frame_step samples and multiplied by the
// window (ones when omitted), as [batch, frames, bins, 2]. Only whole frames are taken:
// frames = 1 + (length - frame_length) / frame_step. frame_length defaults to the window's
// length, else the signal's (as the ONNX reference does). onesided (default 1) keeps
// frame_length / 2 + 1 bins. float32 and float64, computed in double.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/signal/fft_f64.h"
#include "exec/kernels/signal/signal_ops.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

using Complex = FftF64::Complex;

struct StftLayout {
  int64_t batch = 0, length = 0, components = 1;
  int64_t frames = 0, step = 0, bins = 0;
};

template <typename T>
void TransformFrames(const FftF64& fft, const StftLayout& l, const T* x, const T* window, T* y,
                     int threads) {
  const int64_t n = fft.size();
  const int64_t count = l.batch * l.frames;
  const int nt = ThreadsFor(threads, count * n * 8);
  std::vector<std::vector<Complex>> buffers(static_cast<size_t>(std::max(nt, 1)));
  ParallelFor(nt, count, [&](int64_t bf, int worker) {
    std::vector<Complex>& buf = buffers[static_cast<size_t>(worker)];
    buf.resize(static_cast<size_t>(2 * n) + fft.scratch_size());
    Complex* in = buf.data();
    Complex* out = in + n;
    const int64_t b = bf / l.frames, f = bf % l.frames;
    const T* src = x + (b * l.length + f * l.step) * l.components;
    for (int64_t j = 0; j < n; ++j) {
      const double w = window ? static_cast<double>(window[j]) : 1.0;
      const T* v = src + j * l.components;
      in[j] = Complex(static_cast<double>(v[0]) * w,
                      l.components == 2 ? static_cast<double>(v[1]) * w : 0.0);
    }
    fft.Run(in, out, out + n);
    T* dst = y + bf * l.bins * 2;
    for (int64_t k = 0; k < l.bins; ++k) {
      dst[2 * k] = static_cast<T>(out[k].real());
      dst[2 * k + 1] = static_cast<T>(out[k].imag());
    }
  });
}

class StftKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<StftKernel>(new StftKernel());
    EPCTX_ASSIGN_OR_RETURN(int64_t onesided, node.attrs->GetInt("onesided", 1));
    if (onesided != 0 && onesided != 1) {
      return EPCTX_ERROR(kInvalidArgument, "onesided is {}, expected 0 or 1", onesided);
    }
    kernel->onesided_ = onesided == 1;
    if (InputPresent(node, 0)) {
      const DataType t = node.inputs[0].dtype;
      if (t != DataType::kUndefined && t != DataType::kFloat32 && t != DataType::kFloat64) {
        return EPCTX_ERROR(kUnsupported, "input signal has type {}, expected float32 or float64",
                           DataTypeName(t));
      }
    }
    EPCTX_RETURN_IF_ERROR(ExpectStaticRank(node, 0, 3, "signal"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticRank(node, 2, 1, "window"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "signal"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* step_t, RequiredInput(ctx, 1, "frame_step"));
    const Tensor* window = ctx.input_count() > 2 ? ctx.input(2) : nullptr;
    const Tensor* length_t = ctx.input_count() > 3 ? ctx.input(3) : nullptr;
    const std::vector<int64_t>& s = x->shape();
    if (s.size() != 3 || (s[2] != 1 && s[2] != 2)) {
      return EPCTX_ERROR(kInvalidArgument,
                         "input signal has shape {}, expected [batch, length, 1] (real) or "
                         "[batch, length, 2] (complex)",
                         ShapeToString(s));
    }
    StftLayout l;
    l.batch = s[0];
    l.length = s[1];
    l.components = s[2];
    EPCTX_ASSIGN_OR_RETURN(l.step, ReadIntScalar(*step_t, "frame_step"));
    if (l.step < 1) {
      return EPCTX_ERROR(kInvalidArgument, "frame_step is {}, expected at least 1", l.step);
    }
    int64_t frame_length = l.length;
    if (window) {
      if (window->dtype() != x->dtype() || window->shape().size() != 1) {
        return EPCTX_ERROR(kInvalidArgument, "input window is {} {}, expected a {} vector",
                           DataTypeName(window->dtype()), ShapeToString(window->shape()),
                           DataTypeName(x->dtype()));
      }
      frame_length = window->shape()[0];
    }
    if (length_t) {
      EPCTX_ASSIGN_OR_RETURN(frame_length, ReadIntScalar(*length_t, "frame_length"));
      if (window && frame_length != window->shape()[0]) {
        return EPCTX_ERROR(kInvalidArgument, "frame_length {} differs from the window's length {}",
                           frame_length, window->shape()[0]);
      }
    }
    if (frame_length < 1 || frame_length > l.length) {
      return EPCTX_ERROR(kInvalidArgument, "frame_length {} is outside [1, {}] (signal length)",
                         frame_length, l.length);
    }
    EPCTX_ASSIGN_OR_RETURN(FftF64 fft, FftF64::Create(frame_length, false));
    l.frames = 1 + (l.length - frame_length) / l.step;
    l.bins = onesided_ ? frame_length / 2 + 1 : frame_length;
    EPCTX_ASSIGN_OR_RETURN(Tensor * y,
                           ctx.AllocateOutput(0, x->dtype(), {l.batch, l.frames, l.bins, 2}));
    switch (x->dtype()) {
      case DataType::kFloat32:
        TransformFrames<float>(fft, l, x->data_as<float>(),
                               window ? window->data_as<float>() : nullptr,
                               y->mutable_data_as<float>(), ctx.num_threads());
        break;
      case DataType::kFloat64:
        TransformFrames<double>(fft, l, x->data_as<double>(),
                                window ? window->data_as<double>() : nullptr,
                                y->mutable_data_as<double>(), ctx.num_threads());
        break;
      default:
        return EPCTX_ERROR(kUnsupported, "input signal has type {}, expected float32 or float64",
                           DataTypeName(x->dtype()));
    }
    return Status::Ok();
  }

 private:
  StftKernel() = default;

  bool onesided_ = true;
};

}  // namespace

void RegisterStft(KernelRegistry& registry) {
  registry.Register("", "STFT", 17, &StftKernel::Create);
}

}  // namespace epctx::exec::kernels
