// ConvTranspose on float32 over 1 to 3 spatial dims: per image and group, one GEMM
// col = W_g^T [M/group * taps, C/group] x X_g [C/group, input positions], then col2im scatters
// every column entry to the output position its tap reaches (stride, dilation, pads).
#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/scratch.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/nn/gemm_f32.h"
#include "exec/kernels/nn/window.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// Adds the column matrix of one output channel (taps rows of `positions` input positions) into
// its output plane `y`. `w.in` is ConvTranspose's input, `w.out` its output.
void Col2ImChannel(const Window3d& w, const float* col, float* y) {
  const int64_t positions = w.in_size();
  int64_t tap = 0;
  for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
    for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
      for (int64_t kw = 0; kw < w.kernel[2]; ++kw, ++tap) {
        const float* c = col + tap * positions;
        const int64_t sd = kd * w.dilation[0] - w.pad_begin[0];
        const int64_t sh = kh * w.dilation[1] - w.pad_begin[1];
        const int64_t sw = kw * w.dilation[2] - w.pad_begin[2];
        // Input indices i whose output i * stride + s lies in [0, out).
        const int64_t d_lo = FirstInside(sd, w.stride[0], 0);
        const int64_t d_hi = std::min(w.in[0], EndInside(sd, w.stride[0], w.out[0]));
        const int64_t h_lo = FirstInside(sh, w.stride[1], 0);
        const int64_t h_hi = std::min(w.in[1], EndInside(sh, w.stride[1], w.out[1]));
        const int64_t w_lo = FirstInside(sw, w.stride[2], 0);
        const int64_t w_hi = std::min(w.in[2], EndInside(sw, w.stride[2], w.out[2]));
        for (int64_t id = d_lo; id < d_hi; ++id) {
          const int64_t od = id * w.stride[0] + sd;
          for (int64_t ih = h_lo; ih < h_hi; ++ih) {
            const int64_t oh = ih * w.stride[1] + sh;
            const int64_t base = (od * w.out[1] + oh) * w.out[2] + sw;
            const float* cr = c + (id * w.in[1] + ih) * w.in[2];
            for (int64_t iw = w_lo; iw < w_hi; ++iw) y[base + iw * w.stride[2]] += cr[iw];
          }
        }
      }
    }
  }
}

class ConvTransposeKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<ConvTransposeKernel>(new ConvTransposeKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->window_, ParseWindowAttrs(*node.attrs));
    EPCTX_ASSIGN_OR_RETURN(kernel->group_, node.attrs->GetInt("group", 1));
    if (kernel->group_ < 1) {
      return EPCTX_ERROR(kInvalidArgument, "group is {}, expected at least 1", kernel->group_);
    }
    EPCTX_ASSIGN_OR_RETURN(kernel->output_padding_, node.attrs->GetInts("output_padding"));
    EPCTX_ASSIGN_OR_RETURN(kernel->output_shape_, node.attrs->GetInts("output_shape"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "W"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 2, DataType::kFloat32, "B"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* wt, RequiredInput(ctx, 1, "W"));
    const Tensor* b = ctx.input(2);
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*wt, DataType::kFloat32, "W"));
    const std::vector<int64_t>& xs = x->shape();
    const std::vector<int64_t>& ws = wt->shape();
    if (ws.size() < 3 || ws.size() > 5) {
      return EPCTX_ERROR(kInvalidArgument, "input W has rank {}, expected 3 to 5", ws.size());
    }
    if (xs.size() != ws.size()) {
      return EPCTX_ERROR(kInvalidArgument, "input X has rank {}, expected {} (the rank of W)",
                         xs.size(), ws.size());
    }
    const int64_t batch = xs[0], channels = xs[1];
    if (ws[0] != channels || channels % group_ != 0) {
      return EPCTX_ERROR(kInvalidArgument,
                         "input X has {} channels, W has {} input channels and group is {}",
                         channels, ws[0], group_);
    }
    const int64_t out_per_group = ws[1];
    const int64_t out_channels = out_per_group * group_;
    if (b != nullptr) {
      EPCTX_RETURN_IF_ERROR(ExpectDtype(*b, DataType::kFloat32, "B"));
      if (b->shape().size() != 1 || b->shape()[0] != out_channels) {
        return EPCTX_ERROR(kInvalidArgument, "input B has shape {}, expected [{}]",
                           ShapeToString(b->shape()), out_channels);
      }
    }
    EPCTX_ASSIGN_OR_RETURN(Window3d w, Geometry(xs, ws));
    std::vector<int64_t> y_shape{batch, out_channels};
    y_shape.insert(y_shape.end(), w.out_spatial.begin(), w.out_spatial.end());
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, y_shape));
    if (y->element_count() == 0) return Status::Ok();

    const int64_t in_per_group = channels / group_;
    const int64_t taps = w.kernel_size();
    const int64_t positions = w.in_size();
    const int64_t rows = out_per_group * taps;  // GEMM M
    EPCTX_ASSIGN_OR_RETURN(float* col, ThreadScratchF32(static_cast<size_t>(rows * positions)));
    const float* xp = x->data_as<float>();
    const float* wp = wt->data_as<float>();
    const float* bp = b != nullptr ? b->data_as<float>() : nullptr;
    float* yp = y->mutable_data_as<float>();
    const int64_t plane = w.out_size();
    const int threads = ctx.num_threads();
    const int nt = ThreadsFor(threads, out_per_group * plane * taps);
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t g = 0; g < group_; ++g) {
        const GemmOperand a{wp + g * in_per_group * rows, rows, true};
        const GemmOperand bx{xp + (n * channels + g * in_per_group) * positions, positions, false};
        ParallelGemmF32(rows, positions, in_per_group, 1.0f, a, bx, col, positions, threads,
                        [](int64_t, int64_t, int64_t, int64_t) {});
        float* yg = yp + (n * out_channels + g * out_per_group) * plane;
        ParallelForRanges(nt, out_per_group, 1, [&](int64_t begin, int64_t end) {
          for (int64_t m = begin; m < end; ++m) {
            float* ym = yg + m * plane;
            std::fill(ym, ym + plane, bp != nullptr ? bp[g * out_per_group + m] : 0.0f);
            Col2ImChannel(w, col + m * taps * positions, ym);
          }
        });
      }
    }
    return Status::Ok();
  }

 private:
  ConvTransposeKernel() = default;

  // The output extent and pads of every spatial dim, as ONNX defines them (explicit pads, or
  // pads derived from output_shape or auto_pad).
  Result<Window3d> Geometry(const std::vector<int64_t>& xs, const std::vector<int64_t>& ws) const {
    const size_t rank = xs.size() - 2;
    EPCTX_RETURN_IF_ERROR(ValidateWindowAttrs(window_, rank));
    const std::span<const int64_t> kernel(ws.data() + 2, rank);
    if (!window_.kernel_shape.empty() &&
        !std::equal(kernel.begin(), kernel.end(), window_.kernel_shape.begin())) {
      return EPCTX_ERROR(kInvalidArgument, "kernel_shape {} differs from W's spatial dims {}",
                         ShapeToString(window_.kernel_shape),
                         ShapeToString({kernel.begin(), kernel.end()}));
    }
    if (!output_padding_.empty() && output_padding_.size() != rank) {
      return EPCTX_ERROR(kInvalidArgument, "output_padding has {} values, expected {}",
                         output_padding_.size(), rank);
    }
    // output_shape may also list the batch and channel dims.
    std::span<const int64_t> output_shape(output_shape_);
    if (output_shape.size() == rank + 2) output_shape = output_shape.subspan(2);
    if (!output_shape.empty() && output_shape.size() != rank) {
      return EPCTX_ERROR(kInvalidArgument, "output_shape has {} values, expected {}",
                         output_shape_.size(), rank);
    }
    Window3d w;
    w.out_spatial.resize(rank);
    for (size_t i = 0; i < rank; ++i) {
      const size_t j = 3 - rank + i;
      const int64_t in = xs[2 + i], k = kernel[i];
      const int64_t s = window_.strides.empty() ? 1 : window_.strides[i];
      const int64_t d = window_.dilations.empty() ? 1 : window_.dilations[i];
      const int64_t op = output_padding_.empty() ? 0 : output_padding_[i];
      if (k < 1) return EPCTX_ERROR(kInvalidArgument, "W has shape {}", ShapeToString(ws));
      if (op < 0 || op >= std::max(s, d)) {
        return EPCTX_ERROR(kInvalidArgument,
                           "output_padding {} is {}, expected in [0, max(stride, dilation))", i,
                           op);
      }
      const int64_t natural = s * (in - 1) + op + (k - 1) * d + 1;
      int64_t pb = 0, pe = 0, out = 0;
      const bool same =
          window_.auto_pad == AutoPad::kSameUpper || window_.auto_pad == AutoPad::kSameLower;
      if (!output_shape.empty()) {
        // Pads from the asked size, as the spec says and ONNX Runtime does: the odd unit at the
        // beginning except for SAME_UPPER; an output larger than the natural size grows at the
        // end (zeros plus the bias there).
        out = output_shape[i];
        const int64_t total = natural - out, padding = std::max<int64_t>(0, total);
        pb = window_.auto_pad == AutoPad::kSameUpper ? padding / 2 : padding - padding / 2;
        pe = total - pb;
      } else if (same) {
        out = in * s;
        const int64_t total = natural - out;
        // The odd unit of padding goes to the end except for SAME_LOWER, as in Conv (and as
        // the ONNX test data and ONNX Runtime have it; the spec's text says the opposite).
        if (window_.auto_pad == AutoPad::kSameLower) {
          pe = total / 2;
          pb = total - pe;
        } else {
          pb = total / 2;
          pe = total - pb;
        }
      } else {
        if (window_.auto_pad == AutoPad::kNotSet && !window_.pads.empty()) {
          pb = window_.pads[i];
          pe = window_.pads[rank + i];
        }
        out = natural - pb - pe;
      }
      if (out < 0) {
        return EPCTX_ERROR(kInvalidArgument, "spatial dim {} of the output would be {}", i, out);
      }
      w.in[j] = in;
      w.out[j] = out;
      w.kernel[j] = k;
      w.stride[j] = s;
      w.dilation[j] = d;
      w.pad_begin[j] = pb;
      w.pad_end[j] = pe;
      w.out_spatial[i] = out;
    }
    return w;
  }

  WindowAttrs window_;
  int64_t group_ = 1;
  std::vector<int64_t> output_padding_;
  std::vector<int64_t> output_shape_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateConvTranspose(const NodeInfo& node) {
  return ConvTransposeKernel::Create(node);
}

}  // namespace epctx::exec::kernels
