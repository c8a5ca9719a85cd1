// com.epctx DnnlPool: MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool run by oneDNN on
// an activation in the layout the compiler planned (the channel-blocked one between
// convolutions), so pooling does not break the blocked chain; 2-D max pooling of 8-channel
// blocks and averages over whole blocked images by our own passes (blocked_max_pool.h,
// blocked_global_average.h).
// Attributes: `pool` ("max" or "avg"), `global` (0/1), `count_include_pad` (avg), the ONNX
// window attributes (kernel_shape, strides, pads, dilations, auto_pad, ceil_mode), `layout` and
// `channels` (the logical channel count).
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/nn/window.h"
#include "exec/kernels/onednn/activation_layout.h"
#include "exec/kernels/onednn/blocked_global_average.h"
#include "exec/kernels/onednn/blocked_max_pool.h"
#include "exec/kernels/onednn/conv_primitive.h"
#include "exec/kernels/onednn/primitive_memo.h"
#include "exec/kernels/onednn/runtime.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {
namespace {

struct PoolGeometry {
  std::vector<int64_t> src, dst, kernel, strides, dilations, pad_begin, pad_end;
};

class DnnlPoolKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<DnnlPoolKernel>(new DnnlPoolKernel());
    const Attributes& attrs = *node.attrs;
    EPCTX_ASSIGN_OR_RETURN(std::string pool, attrs.GetString("pool", ""));
    if (pool != "max" && pool != "avg") {
      return EPCTX_ERROR(kInvalidArgument, "pool is '{}', expected 'max' or 'avg'", pool);
    }
    k->max_ = pool == "max";
    EPCTX_ASSIGN_OR_RETURN(int64_t global, attrs.GetInt("global", 0));
    k->global_ = global != 0;
    EPCTX_ASSIGN_OR_RETURN(int64_t include_pad, attrs.GetInt("count_include_pad", 0));
    k->include_pad_ = include_pad != 0;
    EPCTX_ASSIGN_OR_RETURN(int64_t layout, attrs.GetInt("layout", 0));
    EPCTX_ASSIGN_OR_RETURN(k->layout_, ParseActivationLayout(layout));
    EPCTX_ASSIGN_OR_RETURN(k->channels_, attrs.GetInt("channels", 0));
    if (k->channels_ < 1) {
      return EPCTX_ERROR(kInvalidArgument, "channels is {}, expected at least 1", k->channels_);
    }
    if (!k->global_) {
      EPCTX_ASSIGN_OR_RETURN(k->window_, ParseWindowAttrs(attrs));
      if (k->window_.kernel_shape.empty()) {
        return EPCTX_ERROR(kInvalidArgument, "kernel_shape is required");
      }
      EPCTX_RETURN_IF_ERROR(ValidateWindowAttrs(k->window_, k->window_.kernel_shape.size()));
    }
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "X"));
    const std::vector<int64_t>& dilations = k->window_.dilations;
    k->own_max_pool_ =
        k->max_ && !k->global_ && k->layout_ == ActivationLayout::kBlocked8 &&
        k->window_.kernel_shape.size() == 2 &&
        std::all_of(dilations.begin(), dilations.end(), [](int64_t d) { return d == 1; });
    k->own_average_ = !k->max_ && k->layout_ != ActivationLayout::kPlain;
    return std::unique_ptr<Kernel>(std::move(k));
  }

  // Whose pass the last run took (a window without input elements, or an average over less than
  // the whole image, takes oneDNN's); before any run, the one a run would take.
  std::string_view implementation() const override {
    const int8_t last = last_run_own_.load(std::memory_order_relaxed);
    const bool own = last == 1 || (last < 0 && (own_max_pool_ || (own_average_ && global_)));
    if (!own) return memo_.implementation();
    return own_max_pool_ ? "epctx:max-pool-8" : "epctx:global-average";
  }

  void Prepare(std::span<const std::vector<int64_t>* const> shapes, int threads) override {
    if (shapes.empty() || shapes[0] == nullptr) return;
    auto src = LogicalShape(*shapes[0], layout_, channels_);
    if (!src.ok() || src->size() < 3 || src->size() > 5) return;
    auto g = Resolve(*src);
    if (g.ok() && !OwnMaxPool(*g).has_value() && !OwnAverage(*g)) {
      (void)PrimitiveFor(*shapes[0], *g, threads);
    }
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> src, LogicalShape(x->shape(), layout_, channels_));
    if (src.size() < 3 || src.size() > 5) {
      return EPCTX_ERROR(kInvalidArgument, "input X has rank {}, expected 3 to 5", src.size());
    }
    EPCTX_ASSIGN_OR_RETURN(PoolGeometry g, Resolve(src));
    EPCTX_ASSIGN_OR_RETURN(
        Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, PhysicalShape(g.dst, layout_)));
    if (y->element_count() == 0) return Status::Ok();
    const int threads = ctx.num_threads();
    if (std::optional<BlockedPoolWindow> own = OwnMaxPool(g)) {
      if (x->element_count() != own->blocks * own->in_h * own->in_w * 8 ||
          y->element_count() != own->blocks * own->out_h * own->out_w * 8) {
        return EPCTX_ERROR(kInvalidArgument, "input X has shape {}, not nChw8c of {}",
                           ShapeToString(x->shape()), ShapeToString(src));
      }
      BlockedMaxPool8(*own, x->data_as<float>(), y->mutable_data_as<float>(), threads);
      last_run_own_.store(1, std::memory_order_relaxed);
      return Status::Ok();
    }
    if (OwnAverage(g)) {
      const int64_t lanes = ChannelBlock(layout_);
      const int64_t blocks = g.src[0] * ((g.src[1] + lanes - 1) / lanes);
      int64_t pixels = 1;
      for (size_t i = 2; i < g.src.size(); ++i) pixels *= g.src[i];
      if (y->element_count() != blocks * lanes || x->element_count() != blocks * pixels * lanes) {
        return EPCTX_ERROR(kInvalidArgument, "input X has shape {}, not blocked {}",
                           ShapeToString(x->shape()), ShapeToString(src));
      }
      BlockedGlobalAverage(x->data_as<float>(), blocks, pixels, lanes, y->mutable_data_as<float>(),
                           threads);
      last_run_own_.store(1, std::memory_order_relaxed);
      return Status::Ok();
    }
    last_run_own_.store(0, std::memory_order_relaxed);
    const dnnl::memory::desc src_md = ActivationDesc(g.src, layout_);
    const dnnl::memory::desc dst_md = ActivationDesc(g.dst, layout_);
    EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const CachedPrimitive> prim,
                           PrimitiveFor(x->shape(), g, threads));
    return ExecuteSrcToDst(*prim, DNNL_ARG_SRC, src_md, x->data(), DNNL_ARG_DST, dst_md, y->data(),
                           threads, "a pooling");
  }

 private:
  DnnlPoolKernel() = default;

  Result<std::shared_ptr<const CachedPrimitive>> PrimitiveFor(const std::vector<int64_t>& x_shape,
                                                              const PoolGeometry& g, int threads) {
    const dnnl::memory::desc src_md = ActivationDesc(g.src, layout_);
    const dnnl::memory::desc dst_md = ActivationDesc(g.dst, layout_);
    const dnnl::algorithm alg = max_           ? dnnl::algorithm::pooling_max
                                : include_pad_ ? dnnl::algorithm::pooling_avg_include_padding
                                               : dnnl::algorithm::pooling_avg_exclude_padding;
    auto key = [&] {
      return fmt::format("pool t{} a{} L{} s{} d{} k{} st{} dl{} pb{} pe{}", threads,
                         static_cast<int>(alg), static_cast<int>(layout_), fmt::join(g.src, ","),
                         fmt::join(g.dst, ","), fmt::join(g.kernel, ","), fmt::join(g.strides, ","),
                         fmt::join(g.dilations, ","), fmt::join(g.pad_begin, ","),
                         fmt::join(g.pad_end, ","));
    };
    return memo_.FindOrCreate(x_shape, threads, key, [&]() -> Result<CachedPrimitive> {
      ThreadBudget budget(threads);
      try {
        using dims = dnnl::memory::dims;
        dims dilation;
        for (int64_t d : g.dilations) dilation.push_back(d - 1);
        dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, src_md, dst_md,
                                            dims(g.strides.begin(), g.strides.end()),
                                            dims(g.kernel.begin(), g.kernel.end()), dilation,
                                            dims(g.pad_begin.begin(), g.pad_begin.end()),
                                            dims(g.pad_end.begin(), g.pad_end.end()));
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        dnnl::pooling_v2_forward::primitive_desc pd(desc, attr, CpuEngine());
        CachedPrimitive out;
        out.primitive = dnnl::pooling_v2_forward(pd);
        out.scratchpad_bytes = pd.scratchpad_desc().get_size();
        out.implementation = std::string("onednn:") + pd.impl_info_str();
        return out;
      } catch (const dnnl::error& e) {
        return FromDnnlError(e, fmt::format("pooling {} with kernel {}", fmt::join(g.src, "x"),
                                            fmt::join(g.kernel, "x")));
      }
    });
  }

  // Whether our own pass averages this: one window over the whole blocked image, no padding.
  bool OwnAverage(const PoolGeometry& g) const {
    if (!own_average_) return false;
    for (size_t i = 2; i < g.src.size(); ++i) {
      const size_t j = i - 2;
      if (g.dst[i] != 1 || g.kernel[j] != g.src[i] || g.pad_begin[j] != 0 || g.pad_end[j] != 0 ||
          g.dilations[j] != 1) {
        return false;
      }
    }
    return true;
  }

  // The window of our own 8-channel max pooling (blocked_max_pool.h), when it takes this one.
  std::optional<BlockedPoolWindow> OwnMaxPool(const PoolGeometry& g) const {
    if (!own_max_pool_ || g.src.size() != 4 || g.dst.size() != 4) return std::nullopt;
    BlockedPoolWindow w;
    w.blocks = g.src[0] * ((g.src[1] + 7) / 8);
    w.in_h = g.src[2];
    w.in_w = g.src[3];
    w.out_h = g.dst[2];
    w.out_w = g.dst[3];
    w.kernel_h = g.kernel[0];
    w.kernel_w = g.kernel[1];
    w.stride_h = g.strides[0];
    w.stride_w = g.strides[1];
    w.pad_top = g.pad_begin[0];
    w.pad_left = g.pad_begin[1];
    if (!EveryWindowHoldsInput(w)) return std::nullopt;
    return w;
  }

  Result<PoolGeometry> Resolve(const std::vector<int64_t>& src) const {
    PoolGeometry g;
    g.src = src;
    g.dst = {src[0], src[1]};
    const size_t spatial = src.size() - 2;
    if (global_) {
      for (size_t i = 0; i < spatial; ++i) {
        if (src[2 + i] < 1) {
          return EPCTX_ERROR(kInvalidArgument, "input X has shape {}", ShapeToString(src));
        }
        g.kernel.push_back(src[2 + i]);
        g.strides.push_back(1);
        g.dilations.push_back(1);
        g.pad_begin.push_back(0);
        g.pad_end.push_back(0);
        g.dst.push_back(1);
      }
      return g;
    }
    if (window_.kernel_shape.size() != spatial) {
      return EPCTX_ERROR(kInvalidArgument, "input X has {} spatial dims, kernel_shape {}", spatial,
                         window_.kernel_shape.size());
    }
    EPCTX_ASSIGN_OR_RETURN(Window3d w,
                           ResolveWindow(window_, std::span(src).subspan(2), window_.kernel_shape));
    for (size_t i = 0; i < spatial; ++i) {
      const size_t j = 3 - spatial + i;
      const int64_t span = (w.kernel[j] - 1) * w.dilation[j] + 1;
      // Ceil mode's last window may run past the end padding: oneDNN sees that as more padding
      // (ignored by max and by the average that excludes padding).
      const int64_t pad_end =
          std::max(w.pad_end[j], (w.out[j] - 1) * w.stride[j] + span - w.in[j] - w.pad_begin[j]);
      if (pad_end != w.pad_end[j] && !max_ && include_pad_) {
        return EPCTX_ERROR(kUnsupported,
                           "average pooling counting padding with ceil_mode windows past the "
                           "padding");
      }
      g.kernel.push_back(w.kernel[j]);
      g.strides.push_back(w.stride[j]);
      g.dilations.push_back(w.dilation[j]);
      g.pad_begin.push_back(w.pad_begin[j]);
      g.pad_end.push_back(pad_end);
      g.dst.push_back(w.out[j]);
    }
    return g;
  }

  bool max_ = true;
  bool global_ = false;
  bool own_max_pool_ = false;             // 2-D max pooling of nChw8c without dilation (OwnMaxPool)
  bool own_average_ = false;              // average pooling of blocks (OwnAverage decides)
  std::atomic<int8_t> last_run_own_{-1};  // -1 before any run; see implementation()
  bool include_pad_ = false;
  ActivationLayout layout_ = ActivationLayout::kPlain;
  int64_t channels_ = 0;
  PrimitiveMemo memo_;
  WindowAttrs window_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateDnnlPool(const NodeInfo& node) {
  return DnnlPoolKernel::Create(node);
}

}  // namespace epctx::exec::kernels::onednn
