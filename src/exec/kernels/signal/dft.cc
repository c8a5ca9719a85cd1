// DFT: the discrete Fourier transform (or its inverse, scaled by 1/n) of every line of a real
// [..., 1] or complex [..., 2] tensor along one axis, as complex [..., 2]. dft_length n pads the
// lines with zeros or truncates them; onesided keeps the first n/2 + 1 frequencies, as the ONNX
// reference does for any input. Opset 17 takes the axis as an attribute (default 1), opset 20
// as an optional input (default -2). float32 and float64, computed in the element type by the
// FFT of dft_plan.h; real lines of even length take the half-length transform (an inverse of a
// real line is the conjugate of its forward transform, over n). Lines are batched across
// vector lanes and batches spread over threads.
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

// How one transform maps onto the input and output tensors.
struct DftLayout {
  int64_t outer = 1;       // product of the dims before the axis
  int64_t inner = 1;       // product of the dims between the axis and the complex dim
  int64_t in_len = 0;      // input length along the axis
  int64_t out_len = 0;     // output length along the axis
  int64_t components = 1;  // 1 (real) or 2 (complex) input values per element
};

// The first element of each line in [first, first + lanes) (line = outer index * inner + inner
// index) in a tensor whose axis has length `len` and whose elements hold `width` values.
template <typename T>
void LinePointers(const DftLayout& l, T* base, int64_t len, int64_t width, int64_t first,
                  int64_t lanes, T** at) {
  for (int64_t lane = 0; lane < lanes; ++lane) {
    const int64_t line = first + lane, o = line / l.inner, i = line % l.inner;
    at[lane] = base + (o * len * l.inner + i) * width;
  }
}

// Loads lines [first, first + lanes), padded with zeros or truncated to n, into re (and im for
// complex input) as [position][lane].
template <typename T>
void LoadLines(const DftLayout& l, const T* x, int64_t n, int64_t first, int64_t lanes, T* re,
               T* im) {
  const int64_t copy_len = std::min(l.in_len, n);
  const int64_t step = l.inner * l.components;  // between positions of one line
  const T* src[kMaxLanes<T>] = {};
  LinePointers(l, x, l.in_len, l.components, first, lanes, src);
  LoadLanes(src, step, static_cast<const T*>(nullptr), copy_len, lanes, re);
  std::fill(re + copy_len * lanes, re + n * lanes, T(0));
  if (l.components == 2) {
    for (int64_t lane = 0; lane < lanes; ++lane) ++src[lane];
    LoadLanes(src, step, static_cast<const T*>(nullptr), copy_len, lanes, im);
    std::fill(im + copy_len * lanes, im + n * lanes, T(0));
  }
}

template <typename T>
Status TransformLines(const DftPlan<T>& plan, const DftLayout& l, bool inverse, const T* x, T* y,
                      int threads) {
  const int64_t n = plan.size();
  const int64_t lines = l.outer * l.inner;
  if (lines == 0) return Status::Ok();
  const bool real = l.components == 1;
  const T scale = inverse ? T(1) / static_cast<T>(n) : T(1);
  // A real line's inverse is the conjugate of its forward transform (scaled).
  const T im_sign = real && inverse ? -scale : scale;
  const size_t per_lane = static_cast<size_t>(n) * (real ? 3 : 4);
  const LineBatches batches = PlanLineBatches(plan, lines, per_lane, threads);
  EPCTX_ASSIGN_OR_RETURN(T * scratch, LineBatchScratch<T>(batches));
  ParallelFor(batches.threads, batches.batches, [&](int64_t batch, int worker) {
    const int64_t first = batch * batches.lanes;
    const int64_t lanes = std::min(batches.lanes, lines - first);
    const LaneBuffers<T> buf = LaneBuffersOf(scratch, batches, worker, n, lanes, !real);
    LoadLines(l, x, n, first, lanes, buf.in_re, buf.in_im);
    if (real) {
      plan.Real(buf.in_re, lanes, lanes, l.out_len, buf.out_re, buf.out_im, buf.work);
    } else {
      plan.Complex(buf.in_re, buf.in_im, lanes, lanes, inverse, buf.out_re, buf.out_im, buf.work);
    }
    T* dst[kMaxLanes<T>] = {};
    LinePointers(l, y, l.out_len, 2, first, lanes, dst);
    StoreLanes(buf.out_re, buf.out_im, scale, im_sign, l.out_len, lanes, dst, l.inner * 2);
  });
  return Status::Ok();
}

class DftKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool axis_is_input) {
    auto kernel = std::unique_ptr<DftKernel>(new DftKernel());
    kernel->axis_is_input_ = axis_is_input;
    if (!axis_is_input) {
      EPCTX_ASSIGN_OR_RETURN(kernel->axis_, node.attrs->GetInt("axis", 1));
    }
    EPCTX_ASSIGN_OR_RETURN(int64_t inverse, node.attrs->GetInt("inverse", 0));
    EPCTX_ASSIGN_OR_RETURN(int64_t onesided, node.attrs->GetInt("onesided", 0));
    if ((inverse != 0 && inverse != 1) || (onesided != 0 && onesided != 1)) {
      return EPCTX_ERROR(kInvalidArgument, "inverse {} and onesided {} must be 0 or 1", inverse,
                         onesided);
    }
    kernel->inverse_ = inverse == 1;
    kernel->onesided_ = onesided == 1;
    if (InputPresent(node, 0)) {
      const DataType t = node.inputs[0].dtype;
      if (t != DataType::kUndefined && t != DataType::kFloat32 && t != DataType::kFloat64) {
        return EPCTX_ERROR(kUnsupported, "input input has type {}, expected float32 or float64",
                           DataTypeName(t));
      }
    }
    // Plan now when the length is static; a length the run would refuse is reported then.
    if (const int64_t n = kernel->StaticLength(node); n > 0 && InputPresent(node, 0)) {
      if (node.inputs[0].dtype == DataType::kFloat32) (void)kernel->f32_plans_.Get(n);
      if (node.inputs[0].dtype == DataType::kFloat64) (void)kernel->f64_plans_.Get(n);
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    const std::vector<int64_t>& s = x->shape();
    const int64_t rank = static_cast<int64_t>(s.size());
    if (rank < 2 || (s.back() != 1 && s.back() != 2)) {
      return EPCTX_ERROR(kInvalidArgument,
                         "input input has shape {}, expected [..., 1] (real) or [..., 2] "
                         "(complex) with at least one signal dimension",
                         ShapeToString(s));
    }
    int64_t axis = axis_;
    if (axis_is_input_) {
      axis = -2;
      if (const Tensor* t = ctx.input_count() > 2 ? ctx.input(2) : nullptr) {
        EPCTX_ASSIGN_OR_RETURN(axis, ReadIntScalar(*t, "axis"));
      }
    }
    // The last dim holds the complex components, so it is no signal axis.
    const int64_t normalized = axis < 0 ? axis + rank : axis;
    if (normalized < 0 || normalized > rank - 2) {
      return EPCTX_ERROR(kInvalidArgument, "axis {} is outside [{}, -2] and [0, {}] for input {}",
                         axis, -rank, rank - 2, ShapeToString(s));
    }
    DftLayout layout;
    EPCTX_ASSIGN_OR_RETURN(layout.outer, CheckedDimProduct(s, 0, static_cast<size_t>(normalized)));
    EPCTX_ASSIGN_OR_RETURN(layout.inner,
                           CheckedDimProduct(s, static_cast<size_t>(normalized) + 1, s.size() - 1));
    layout.in_len = s[static_cast<size_t>(normalized)];
    layout.components = s.back();
    int64_t n = layout.in_len;
    if (const Tensor* t = ctx.input_count() > 1 ? ctx.input(1) : nullptr) {
      EPCTX_ASSIGN_OR_RETURN(n, ReadIntScalar(*t, "dft_length"));
    }
    layout.out_len = onesided_ ? n / 2 + 1 : n;
    std::vector<int64_t> out_shape = s;
    out_shape[static_cast<size_t>(normalized)] = layout.out_len;
    out_shape.back() = 2;
    switch (x->dtype()) {
      case DataType::kFloat32:
        return RunTyped<float>(ctx, f32_plans_, layout, n, *x, out_shape);
      case DataType::kFloat64:
        return RunTyped<double>(ctx, f64_plans_, layout, n, *x, out_shape);
      default:
        return EPCTX_ERROR(kUnsupported, "input input has type {}, expected float32 or float64",
                           DataTypeName(x->dtype()));
    }
  }

 private:
  DftKernel() = default;

  template <typename T>
  Status RunTyped(KernelContext& ctx, DftPlanCache<T>& plans, const DftLayout& layout, int64_t n,
                  const Tensor& x, std::vector<int64_t> out_shape) const {
    EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const DftPlan<T>> plan, plans.Get(n));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.dtype(), std::move(out_shape)));
    return TransformLines<T>(*plan, layout, inverse_, x.data_as<T>(), y->mutable_data_as<T>(),
                             ctx.num_threads());
  }

  // The transform length when the compiler knows it: a constant dft_length, else the static
  // length of the input along a known axis. 0 when unknown.
  int64_t StaticLength(const NodeInfo& node) const {
    if (InputPresent(node, 1)) {
      if (node.inputs[1].constant == nullptr) return 0;
      Result<int64_t> n = ReadIntScalar(*node.inputs[1].constant, "dft_length");
      return n.ok() ? *n : 0;
    }
    int64_t axis = axis_;
    if (axis_is_input_) {
      axis = -2;
      if (InputPresent(node, 2)) {
        if (node.inputs[2].constant == nullptr) return 0;
        Result<int64_t> a = ReadIntScalar(*node.inputs[2].constant, "axis");
        if (!a.ok()) return 0;
        axis = *a;
      }
    }
    const std::vector<int64_t>* s = InputPresent(node, 0) ? StaticShape(node, 0) : nullptr;
    if (s == nullptr) return 0;
    const int64_t rank = static_cast<int64_t>(s->size());
    const int64_t normalized = axis < 0 ? axis + rank : axis;
    if (normalized < 0 || normalized > rank - 2) return 0;
    return std::max<int64_t>((*s)[static_cast<size_t>(normalized)], 0);
  }

  bool axis_is_input_ = false;
  int64_t axis_ = 1;
  bool inverse_ = false;
  bool onesided_ = false;
  DftPlanCache<float> f32_plans_;
  DftPlanCache<double> f64_plans_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateDft(const NodeInfo& node) {
  return DftKernel::Create(node, node.opset >= 20);
}

}  // namespace epctx::exec::kernels
