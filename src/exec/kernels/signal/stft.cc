// STFT: the DFT of every frame_length-long frame of a real [batch, length, 1] or complex
// [batch, length, 2] signal, frames starting every frame_step samples and multiplied by the
// window (ones when omitted), as [batch, frames, bins, 2]. Only whole frames are taken:
// frames = 1 + (length - frame_length) / frame_step. frame_length defaults to the window's
// length, else the signal's (as the ONNX reference does). onesided (default 1) keeps
// frame_length / 2 + 1 bins. float32 and float64, computed in the element type by the FFT of
// dft_plan.h, frames batched across vector lanes and batches spread over threads.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/signal/dft_plan.h"
#include "exec/kernels/signal/dft_plan_cache.h"
#include "exec/kernels/signal/lane_transpose.h"
#include "exec/kernels/signal/line_batches.h"
#include "exec/kernels/signal/scalar_input.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

struct StftLayout {
  int64_t batch = 0, length = 0, components = 1;
  int64_t frames = 0, step = 0, bins = 0;
};

// Loads the windowed frames [first, first + lanes) of the batch-major frame list into re (and
// im for complex signals) as [sample][lane].
template <typename T>
void LoadFrames(const StftLayout& l, const T* x, const T* window, int64_t n, int64_t first,
                int64_t lanes, T* re, T* im) {
  const T* src[kMaxLanes<T>] = {};
  for (int64_t lane = 0; lane < lanes; ++lane) {
    const int64_t bf = first + lane, b = bf / l.frames, f = bf % l.frames;
    src[lane] = x + (b * l.length + f * l.step) * l.components;
  }
  LoadLanes(src, l.components, window, n, lanes, re);
  if (l.components == 2) {
    for (int64_t lane = 0; lane < lanes; ++lane) ++src[lane];
    LoadLanes(src, 2, window, n, lanes, im);
  }
}

template <typename T>
Status TransformFrames(const DftPlan<T>& plan, const StftLayout& l, const T* x, const T* window,
                       T* y, int threads) {
  const int64_t n = plan.size();
  const int64_t count = l.batch * l.frames;
  if (count == 0) return Status::Ok();
  // Per lane: the loaded frame (one or two arrays of n) and the spectrum (two of n).
  const size_t per_lane = static_cast<size_t>(n) * (l.components == 1 ? 3 : 4);
  const LineBatches batches = PlanLineBatches(plan, count, per_lane, threads);
  EPCTX_ASSIGN_OR_RETURN(T * scratch, LineBatchScratch<T>(batches));
  ParallelFor(batches.threads, batches.batches, [&](int64_t batch, int worker) {
    const int64_t first = batch * batches.lanes;
    const int64_t lanes = std::min(batches.lanes, count - first);
    const LaneBuffers<T> buf = LaneBuffersOf(scratch, batches, worker, n, lanes, l.components != 1);
    LoadFrames(l, x, window, n, first, lanes, buf.in_re, buf.in_im);
    if (l.components == 1) {
      plan.Real(buf.in_re, lanes, lanes, l.bins, buf.out_re, buf.out_im, buf.work);
    } else {
      plan.Complex(buf.in_re, buf.in_im, lanes, lanes, false, buf.out_re, buf.out_im, buf.work);
    }
    T* dst[kMaxLanes<T>] = {};
    for (int64_t lane = 0; lane < lanes; ++lane) dst[lane] = y + (first + lane) * l.bins * 2;
    StoreLanes(buf.out_re, buf.out_im, T(1), T(1), l.bins, lanes, dst, 2);
  });
  return Status::Ok();
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
    // Plan now when the length is static; a length the run would refuse is reported then.
    if (const int64_t n = StaticFrameLength(node); n > 0 && InputPresent(node, 0)) {
      if (node.inputs[0].dtype == DataType::kFloat32) (void)kernel->f32_plans_.Get(n);
      if (node.inputs[0].dtype == DataType::kFloat64) (void)kernel->f64_plans_.Get(n);
    }
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
    l.frames = 1 + (l.length - frame_length) / l.step;
    l.bins = onesided_ ? frame_length / 2 + 1 : frame_length;
    switch (x->dtype()) {
      case DataType::kFloat32:
        return RunTyped<float>(ctx, f32_plans_, l, frame_length, *x, window);
      case DataType::kFloat64:
        return RunTyped<double>(ctx, f64_plans_, l, frame_length, *x, window);
      default:
        return EPCTX_ERROR(kUnsupported, "input signal has type {}, expected float32 or float64",
                           DataTypeName(x->dtype()));
    }
  }

 private:
  StftKernel() = default;

  template <typename T>
  static Status RunTyped(KernelContext& ctx, DftPlanCache<T>& plans, const StftLayout& l,
                         int64_t frame_length, const Tensor& x, const Tensor* window) {
    EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const DftPlan<T>> plan, plans.Get(frame_length));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y,
                           ctx.AllocateOutput(0, x.dtype(), {l.batch, l.frames, l.bins, 2}));
    return TransformFrames<T>(*plan, l, x.data_as<T>(),
                              window != nullptr ? window->data_as<T>() : nullptr,
                              y->mutable_data_as<T>(), ctx.num_threads());
  }

  // The frame length when the compiler knows it: the window's static length, else a constant
  // frame_length input. 0 when unknown.
  static int64_t StaticFrameLength(const NodeInfo& node) {
    if (const std::vector<int64_t>* w = InputPresent(node, 2) ? StaticShape(node, 2) : nullptr) {
      if (w->size() == 1 && (*w)[0] > 0) return (*w)[0];
    }
    if (InputPresent(node, 3) && node.inputs[3].constant != nullptr) {
      Result<int64_t> n = ReadIntScalar(*node.inputs[3].constant, "frame_length");
      if (n.ok()) return *n;
    }
    return 0;
  }

  bool onesided_ = true;
  DftPlanCache<float> f32_plans_;
  DftPlanCache<double> f64_plans_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateStft(const NodeInfo& node) {
  return StftKernel::Create(node);
}

}  // namespace epctx::exec::kernels
