// DFT: the discrete Fourier transform (or its inverse, scaled by 1/n) of every line of a real
// [..., 1] or complex [..., 2] tensor along one axis, as complex [..., 2]. dft_length n pads the
// lines with zeros or truncates them; onesided keeps the first n/2 + 1 frequencies, as the ONNX
// reference does for any input. Opset 17 takes the axis as an attribute (default 1), opset 20
// as an optional input (default -2). float32 and float64, computed in double.
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

// How one transform maps onto the input and output tensors.
struct DftLayout {
  int64_t outer = 1;       // product of the dims before the axis
  int64_t inner = 1;       // product of the dims between the axis and the complex dim
  int64_t in_len = 0;      // input length along the axis
  int64_t out_len = 0;     // output length along the axis
  int64_t components = 1;  // 1 (real) or 2 (complex) input values per element
};

template <typename T>
void TransformLines(const FftF64& fft, const DftLayout& l, double scale, const T* x, T* y,
                    int threads) {
  const int64_t n = fft.size();
  const int64_t lines = l.outer * l.inner;
  const int64_t copy_len = std::min(l.in_len, n);
  const int nt = ThreadsFor(threads, lines * n * 8);
  std::vector<std::vector<Complex>> buffers(static_cast<size_t>(std::max(nt, 1)));
  ParallelFor(nt, lines, [&](int64_t line, int worker) {
    std::vector<Complex>& buf = buffers[static_cast<size_t>(worker)];
    buf.resize(static_cast<size_t>(2 * n) + fft.scratch_size());
    Complex* in = buf.data();
    Complex* out = in + n;
    const int64_t o = line / l.inner, i = line % l.inner;
    const T* src = x + (o * l.in_len * l.inner + i) * l.components;
    const int64_t in_stride = l.inner * l.components;
    for (int64_t j = 0; j < copy_len; ++j) {
      const T* v = src + j * in_stride;
      in[j] =
          Complex(static_cast<double>(v[0]), l.components == 2 ? static_cast<double>(v[1]) : 0.0);
    }
    std::fill(in + copy_len, in + n, Complex(0, 0));
    fft.Run(in, out, out + n);
    T* dst = y + (o * l.out_len * l.inner + i) * 2;
    for (int64_t k = 0; k < l.out_len; ++k) {
      dst[k * l.inner * 2] = static_cast<T>(out[k].real() * scale);
      dst[k * l.inner * 2 + 1] = static_cast<T>(out[k].imag() * scale);
    }
  });
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
    layout.outer = DimProduct(s, 0, static_cast<size_t>(normalized));
    layout.inner = DimProduct(s, static_cast<size_t>(normalized) + 1, s.size() - 1);
    layout.in_len = s[static_cast<size_t>(normalized)];
    layout.components = s.back();
    int64_t n = layout.in_len;
    if (const Tensor* t = ctx.input_count() > 1 ? ctx.input(1) : nullptr) {
      EPCTX_ASSIGN_OR_RETURN(n, ReadIntScalar(*t, "dft_length"));
    }
    EPCTX_ASSIGN_OR_RETURN(FftF64 fft, FftF64::Create(n, inverse_));
    layout.out_len = onesided_ ? n / 2 + 1 : n;
    std::vector<int64_t> out_shape = s;
    out_shape[static_cast<size_t>(normalized)] = layout.out_len;
    out_shape.back() = 2;
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), out_shape));
    switch (x->dtype()) {
      case DataType::kFloat32:
        Transform<float>(fft, layout, *x, *y, ctx.num_threads());
        break;
      case DataType::kFloat64:
        Transform<double>(fft, layout, *x, *y, ctx.num_threads());
        break;
      default:
        return EPCTX_ERROR(kUnsupported, "input input has type {}, expected float32 or float64",
                           DataTypeName(x->dtype()));
    }
    return Status::Ok();
  }

 private:
  DftKernel() = default;

  template <typename T>
  void Transform(const FftF64& fft, const DftLayout& layout, const Tensor& x, Tensor& y,
                 int threads) const {
    const double scale = inverse_ ? 1.0 / static_cast<double>(fft.size()) : 1.0;
    TransformLines<T>(fft, layout, scale, x.data_as<T>(), y.mutable_data_as<T>(), threads);
  }

  bool axis_is_input_ = false;
  int64_t axis_ = 1;
  bool inverse_ = false;
  bool onesided_ = false;
};

}  // namespace

void RegisterDft(KernelRegistry& registry) {
  registry.Register("", "DFT", 17,
                    [](const NodeInfo& node) { return DftKernel::Create(node, false); });
  registry.Register("", "DFT", 20,
                    [](const NodeInfo& node) { return DftKernel::Create(node, true); });
}

}  // namespace epctx::exec::kernels
