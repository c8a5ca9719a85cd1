// com.epctx DnnlIntegerConv: a 2-D convolution of a uint8 activation (with zero point
// `x_zero_point`) by int8 weights (zero point 0) that the compiler packed into the layout
// oneDNN's int8 convolution reads, into float32: y = output_scales[m] * (conv(x - x_zero_point,
// w) + B'[m]), where the compiler folded the zero point's share into the bias B' (constant
// over positions once the input is padded with the zero point). The static-quantization pattern
// DequantizeLinear -> Conv <- DequantizeLinear, run on int8 weights.
//
// Inputs: X (uint8 NCHW), W (the packed int8 bytes), B' (float32 [M]). Output: float32 NCHW.
// oneDNN's int8 convolutions are fast only channels-last, so the kernel writes X as NHWC padded
// with the zero point, and the NHWC result back as NCHW.
#include <algorithm>
#include <memory>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/scratch.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/families.h"
#include "exec/kernels/onednn/conv_primitive.h"
#include "exec/kernels/onednn/primitive_memo.h"
#include "exec/kernels/onednn/runtime.h"
#include "exec/kernels/onednn/weight_format.h"
#include "util/hash.h"
#include "util/overflow.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {
namespace {

// The padded copy of the input the kernel makes (values): far above any real layer, and refused
// beyond, so that a hostile pads attribute cannot ask for terabytes.
constexpr int64_t kMaxPaddedInput = int64_t{1} << 32;

// x [N, C, H, W] -> out [N, H + top + bottom, W + left + right, C], the border `fill`.
void PadToChannelsLast(const uint8_t* x, const ConvGeometry& g, uint8_t fill, uint8_t* out,
                       int threads) {
  const int64_t c = g.in_channels, h = g.in_spatial[0], w = g.in_spatial[1];
  const int64_t top = g.pad_begin[0], left = g.pad_begin[1];
  const int64_t ph = h + top + g.pad_end[0], pw = w + left + g.pad_end[1];
  if (ph != h || pw != w) std::fill(out, out + g.batch * ph * pw * c, fill);  // the border
  const int nt = ThreadsFor(threads, g.batch * h * w * c);
  ParallelForRanges(nt, g.batch * h, 1, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / h, y = row % h;
      uint8_t* dst = out + ((n * ph + y + top) * pw + left) * c;
      const uint8_t* src = x + n * c * h * w + y * w;
      for (int64_t ch = 0; ch < c; ++ch) {
        const uint8_t* plane = src + ch * h * w;
        for (int64_t col = 0; col < w; ++col) dst[col * c + ch] = plane[col];
      }
    }
  });
}

// y [N, H, W, M] -> out [N, M, H, W].
void ChannelsFirst(const float* y, const ConvGeometry& g, float* out, int threads) {
  const int64_t m = g.out_channels, positions = g.out_spatial[0] * g.out_spatial[1];
  const int nt = ThreadsFor(threads, g.batch * positions * m);
  ParallelForRanges(nt, g.batch * m, 1, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / m, ch = plane % m;
      const float* src = y + n * positions * m + ch;
      float* dst = out + plane * positions;
      for (int64_t p = 0; p < positions; ++p) dst[p] = src[p * m];
    }
  });
}

class DnnlIntegerConvKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<DnnlIntegerConvKernel>(new DnnlIntegerConvKernel());
    const Attributes& attrs = *node.attrs;
    EPCTX_ASSIGN_OR_RETURN(k->window_, ParseWindowAttrs(attrs));
    EPCTX_ASSIGN_OR_RETURN(k->group_, attrs.GetInt("group", 1));
    EPCTX_ASSIGN_OR_RETURN(k->weight_dims_, attrs.GetInts(ops::kWeightsShape));
    EPCTX_ASSIGN_OR_RETURN(k->format_, attrs.GetInts(ops::kWeightsFormat));
    EPCTX_ASSIGN_OR_RETURN(int64_t zero_point, attrs.GetInt("x_zero_point", 0));
    EPCTX_ASSIGN_OR_RETURN(k->config_.output_scales, attrs.GetFloats(ops::kOutputScales));
    if (k->weight_dims_.size() != 4 || k->group_ < 1) {
      return EPCTX_ERROR(kInvalidArgument, "weights_shape {} / group {} is not a 2-D convolution's",
                         ShapeToString(k->weight_dims_), k->group_);
    }
    for (int64_t d : k->weight_dims_) {
      if (d < 1)
        return EPCTX_ERROR(kInvalidArgument, "weights_shape {}", ShapeToString(k->weight_dims_));
    }
    EPCTX_RETURN_IF_ERROR(ValidateWindowAttrs(k->window_, 2));
    if (k->format_.empty()) return EPCTX_ERROR(kInvalidArgument, "weights_format is missing");
    if (zero_point < 0 || zero_point > 255) {
      return EPCTX_ERROR(kInvalidArgument, "x_zero_point {} is not a uint8", zero_point);
    }
    const size_t scales = k->config_.output_scales.size();
    if (scales != 1 && static_cast<int64_t>(scales) != k->weight_dims_[0]) {
      return EPCTX_ERROR(kInvalidArgument, "{} output_scales for {} output channels", scales,
                         k->weight_dims_[0]);
    }
    if (!InputPresent(node, 2)) return EPCTX_ERROR(kInvalidArgument, "input B is missing");
    k->zero_point_ = static_cast<uint8_t>(zero_point);
    k->config_.integer = true;
    k->config_.has_bias = true;
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kUint8, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kInt8, "W"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 2, DataType::kFloat32, "B"));
    k->format_hash_ = Hash64(std::as_bytes(std::span<const int64_t>(k->format_)));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1, "W"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 2, "B"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kUint8, "X"));
    if (x->shape().size() != 4) {
      return EPCTX_ERROR(kInvalidArgument, "input X has shape {}, expected rank 4",
                         ShapeToString(x->shape()));
    }
    EPCTX_ASSIGN_OR_RETURN(ConvGeometry g,
                           ResolveConvGeometry(window_, group_, weight_dims_, x->shape()));
    if (b->dtype() != DataType::kFloat32 || b->element_count() != g.out_channels) {
      return EPCTX_ERROR(kInvalidArgument, "input B has shape {}, expected float32 [{}]",
                         ShapeToString(b->shape()), g.out_channels);
    }
    EPCTX_ASSIGN_OR_RETURN(const ConvGeometry padded, Padded(g));
    EPCTX_ASSIGN_OR_RETURN(int64_t padded_count, CheckedElementCount(padded.src_dims()));
    if (padded_count > kMaxPaddedInput) {
      return EPCTX_ERROR(kInvalidArgument, "input X padded by {} would hold {} values",
                         ShapeToString(window_.pads), padded_count);
    }
    const int threads = ctx.num_threads();
    EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const CachedPrimitive> prim,
                           PrimitiveFor(padded, x->shape(), threads));
    if (w->dtype() != DataType::kInt8 || w->byte_size() != prim->weights.get_size()) {
      return EPCTX_ERROR(kInvalidArgument, "packed W holds {} bytes; its layout needs {}",
                         w->byte_size(), prim->weights.get_size());
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, g.dst_dims()));
    if (y->element_count() == 0) return Status::Ok();
    // The channels-last copies live in this thread's scratch (no fresh pages on every run): the
    // uint8 input first, then, 64-byte aligned, the float output.
    const size_t src_floats = (static_cast<size_t>(padded_count) + 63) / 64 * 16;
    EPCTX_ASSIGN_OR_RETURN(float* scratch,
                           ThreadScratchF32(src_floats + static_cast<size_t>(y->element_count())));
    uint8_t* src = reinterpret_cast<uint8_t*>(scratch);
    float* dst = scratch + src_floats;
    PadToChannelsLast(x->data_as<uint8_t>(), g, zero_point_, src, threads);
    std::unordered_map<int, dnnl::memory> args;
    try {
      using dnnl::memory;
      args.emplace(DNNL_ARG_SRC, Wrap(memory::desc(padded.src_dims(), memory::data_type::u8,
                                                   memory::format_tag::nhwc),
                                      src));
      args.emplace(DNNL_ARG_WEIGHTS, Wrap(prim->weights, w->data()));
      args.emplace(DNNL_ARG_BIAS, Wrap(memory::desc({g.out_channels}, memory::data_type::f32,
                                                    memory::format_tag::x),
                                       b->data()));
      args.emplace(
          DNNL_ARG_DST,
          Wrap(memory::desc(g.dst_dims(), memory::data_type::f32, memory::format_tag::nhwc), dst));
    } catch (const dnnl::error& e) {
      return FromDnnlError(e, "preparing an integer convolution");
    }
    EPCTX_RETURN_IF_ERROR(ExecutePrimitive(*prim, args, threads, "an integer convolution"));
    ChannelsFirst(dst, g, y->mutable_data_as<float>(), threads);
    return Status::Ok();
  }

  std::string_view implementation() const override { return memo_.implementation(); }

  void Prepare(std::span<const std::vector<int64_t>* const> shapes, int threads) override {
    if (shapes.empty() || shapes[0] == nullptr || shapes[0]->size() != 4) return;
    auto g = ResolveConvGeometry(window_, group_, weight_dims_, *shapes[0]);
    if (!g.ok()) return;
    auto padded = Padded(*g);
    if (padded.ok()) (void)PrimitiveFor(*padded, *shapes[0], threads);
  }

 private:
  DnnlIntegerConvKernel() = default;

  // The same convolution on the input already padded: no padding left for oneDNN.
  static Result<ConvGeometry> Padded(const ConvGeometry& g) {
    ConvGeometry p = g;
    for (size_t i = 0; i < p.in_spatial.size(); ++i) {
      if (__builtin_add_overflow(p.in_spatial[i], p.pad_begin[i], &p.in_spatial[i]) ||
          __builtin_add_overflow(p.in_spatial[i], p.pad_end[i], &p.in_spatial[i])) {
        return EPCTX_ERROR(kInvalidArgument, "pads {} overflow", ShapeToString(g.pad_begin));
      }
      p.pad_begin[i] = 0;
      p.pad_end[i] = 0;
    }
    return p;
  }

  Result<std::shared_ptr<const CachedPrimitive>> PrimitiveFor(const ConvGeometry& g,
                                                              const std::vector<int64_t>& shape,
                                                              int threads) {
    return memo_.FindOrCreate(
        shape, threads,
        [&] { return ConvKey(g, config_, threads) + fmt::format(" f{:x}", format_hash_); },
        [&] { return Make(g, threads); });
  }

  Result<CachedPrimitive> Make(const ConvGeometry& g, int threads) const {
    ThreadBudget budget(threads);
    EPCTX_ASSIGN_OR_RETURN(auto pd, MakeConvPrimitiveDesc(g, config_, nullptr));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> wanted, EncodeWeightFormat(pd.weights_desc()));
    if (wanted != format_) {
      // Another shape than the one packed for (or another CPU tier): a primitive that reads the
      // stored layout.
      EPCTX_ASSIGN_OR_RETURN(dnnl::memory::desc stored,
                             StoredWeightLayout(format_, wanted, dnnl::memory::data_type::s8));
      EPCTX_ASSIGN_OR_RETURN(pd, MakeConvPrimitiveDesc(g, config_, &stored));
    }
    try {
      CachedPrimitive out;
      out.primitive = dnnl::convolution_forward(pd);
      out.scratchpad_bytes = pd.scratchpad_desc().get_size();
      out.implementation = std::string("onednn:") + pd.impl_info_str();
      out.weights = pd.weights_desc();
      return out;
    } catch (const dnnl::error& e) {
      return FromDnnlError(e, "creating an integer convolution");
    }
  }

  WindowAttrs window_;
  int64_t group_ = 1;
  std::vector<int64_t> weight_dims_;
  std::vector<int64_t> format_;
  uint64_t format_hash_ = 0;
  uint8_t zero_point_ = 0;
  ConvConfig config_;
  PrimitiveMemo memo_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateDnnlIntegerConv(const NodeInfo& node) {
  return DnnlIntegerConvKernel::Create(node);
}

}  // namespace epctx::exec::kernels::onednn
