// com.epctx DnnlConv: a convolution run by oneDNN on weights the compiler packed into the layout
// the primitive reads (`weights_format`), with bias, activations and a residual addition fused
// as post-ops, reading and writing activations in the layouts the compiler planned.
//
// Inputs: X, W (the packed bytes as float32 [n], or bfloat16 [n] with compute_type "bf16"), B
// (optional), R (the residual, present when post_ops adds one; same shape and layout as the
// output).
#include <memory>
#include <optional>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/families.h"
#include "exec/kernels/onednn/compute_type.h"
#include "exec/kernels/onednn/conv_primitive.h"
#include "exec/kernels/onednn/own_blocked_conv.h"
#include "exec/kernels/onednn/primitive_memo.h"
#include "exec/kernels/onednn/runtime.h"
#include "exec/kernels/onednn/weight_format.h"
#include "util/hash.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {
namespace {

class DnnlConvKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<DnnlConvKernel>(new DnnlConvKernel());
    const Attributes& attrs = *node.attrs;
    EPCTX_ASSIGN_OR_RETURN(k->window_, ParseWindowAttrs(attrs));
    EPCTX_ASSIGN_OR_RETURN(k->group_, attrs.GetInt("group", 1));
    EPCTX_ASSIGN_OR_RETURN(k->weight_dims_, attrs.GetInts(ops::kWeightsShape));
    EPCTX_ASSIGN_OR_RETURN(k->format_, attrs.GetInts(ops::kWeightsFormat));
    EPCTX_ASSIGN_OR_RETURN(int64_t src_layout, attrs.GetInt(ops::kSrcLayout, 0));
    EPCTX_ASSIGN_OR_RETURN(int64_t dst_layout, attrs.GetInt(ops::kDstLayout, 0));
    EPCTX_ASSIGN_OR_RETURN(k->config_.src_layout, ParseActivationLayout(src_layout));
    EPCTX_ASSIGN_OR_RETURN(k->config_.dst_layout, ParseActivationLayout(dst_layout));
    EPCTX_ASSIGN_OR_RETURN(int64_t winograd, attrs.GetInt(ops::kWinograd, 0));
    k->config_.winograd = winograd != 0;
    EPCTX_ASSIGN_OR_RETURN(k->config_.post_ops, ParsePostOps(attrs));
    EPCTX_ASSIGN_OR_RETURN(k->config_.bf16, ParseComputeBf16(attrs));
    if (k->config_.bf16 && k->config_.winograd) {
      return EPCTX_ERROR(kInvalidArgument, "oneDNN has no bfloat16 Winograd convolution");
    }
    k->config_.has_bias = InputPresent(node, 2);
    const bool wants_residual = ResidualIndex(k->config_.post_ops) >= 0;
    if (wants_residual != InputPresent(node, 3)) {
      return EPCTX_ERROR(kInvalidArgument, "post_ops {} a residual, but input R is {}",
                         wants_residual ? "adds" : "does not add",
                         InputPresent(node, 3) ? "present" : "absent");
    }
    if (k->weight_dims_.size() < 3 || k->weight_dims_.size() > 5 || k->group_ < 1) {
      return EPCTX_ERROR(kInvalidArgument, "weights_shape {} / group {} is not a convolution's",
                         ShapeToString(k->weight_dims_), k->group_);
    }
    for (int64_t d : k->weight_dims_) {
      if (d < 1)
        return EPCTX_ERROR(kInvalidArgument, "weights_shape {}", ShapeToString(k->weight_dims_));
    }
    EPCTX_RETURN_IF_ERROR(ValidateWindowAttrs(k->window_, k->weight_dims_.size() - 2));
    if (k->format_.empty()) {
      return EPCTX_ERROR(kInvalidArgument, "weights_format is missing");
    }
    for (size_t i : {0, 1, 2, 3}) {
      if (i == 1) continue;
      EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, i, DataType::kFloat32, "X, B or R"));
    }
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, k->weight_type(), "W"));
    EPCTX_ASSIGN_OR_RETURN(k->own_, OwnBlockedConv::For(k->weight_dims_, k->group_, k->window_,
                                                        k->config_, k->format_, node.inputs[0]));
    k->format_hash_ = Hash64(std::span<const std::byte>(
        reinterpret_cast<const std::byte*>(k->format_.data()), k->format_.size() * 8));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1, "W"));
    const Tensor* b = ctx.input(2);
    const Tensor* r = ctx.input(3);
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    const int64_t channels = weight_dims_[1] * group_;
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> src,
                           LogicalShape(x->shape(), config_.src_layout, channels));
    EPCTX_ASSIGN_OR_RETURN(ConvGeometry g, ResolveConvGeometry(window_, group_, weight_dims_, src));
    const int threads = ctx.num_threads();
    if (own_.has_value() && own_->Takes(g)) return own_->Run(ctx, g, config_, *x, *w, b, r);
    EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const CachedPrimitive> prim,
                           PrimitiveFor(g, x->shape(), threads));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y,
                           CheckedConvOutput(ctx, g, config_.dst_layout, *w, weight_type(),
                                             prim->weights.get_size(), b, r));
    if (y->element_count() == 0) return Status::Ok();
    std::unordered_map<int, dnnl::memory> args;
    try {
      args.emplace(DNNL_ARG_SRC, Wrap(ActivationDesc(g.src_dims(), config_.src_layout), x->data()));
      args.emplace(DNNL_ARG_WEIGHTS, Wrap(prim->weights, w->data()));
      if (b != nullptr) args.emplace(DNNL_ARG_BIAS, Wrap(prim->bias, b->data()));
      args.emplace(DNNL_ARG_DST, Wrap(ActivationDesc(g.dst_dims(), config_.dst_layout), y->data()));
      if (r != nullptr) {
        args.emplace(
            DNNL_ARG_ATTR_MULTIPLE_POST_OP(ResidualIndex(config_.post_ops)) | DNNL_ARG_SRC_1,
            Wrap(prim->residual, r->data()));
      }
    } catch (const dnnl::error& e) {
      return FromDnnlError(e, "preparing a convolution");
    }
    EPCTX_RETURN_IF_ERROR(ExecutePrimitive(*prim, args, threads, "a convolution"));
    ApplyTrailingPostOps(config_.post_ops, y->mutable_data_as<float>(), y->element_count(),
                         threads);
    return Status::Ok();
  }

  std::string_view implementation() const override {
    // Ours unless some input shape needed a primitive.
    return own_.has_value() && !memo_.made_any() ? own_->name() : memo_.implementation();
  }

  void Prepare(std::span<const std::vector<int64_t>* const> shapes, int threads) override {
    if (shapes.empty() || shapes[0] == nullptr) return;
    auto src = LogicalShape(*shapes[0], config_.src_layout, weight_dims_[1] * group_);
    if (!src.ok()) return;
    auto g = ResolveConvGeometry(window_, group_, weight_dims_, *src);
    if (g.ok() && !(own_.has_value() && own_->Takes(*g))) {
      (void)PrimitiveFor(*g, *shapes[0], threads);
    }
  }

 private:
  DnnlConvKernel() = default;

  // The primitive for this input shape and thread count: the last one used, or the process's.
  Result<std::shared_ptr<const CachedPrimitive>> PrimitiveFor(const ConvGeometry& g,
                                                              const std::vector<int64_t>& x_shape,
                                                              int threads) {
    return memo_.FindOrCreate(
        x_shape, threads,
        [&] { return ConvKey(g, config_, threads) + fmt::format(" f{:x}", format_hash_); },
        [&] { return Make(g, threads); });
  }

  struct WinogradMatch {
    dnnl::convolution_forward::primitive_desc pd;
    int made_for = 0;
    int run_threads = 0;  // 0: the session's
  };

  // The stored Winograd layout is not that of oneDNN's first choice for the session's count:
  // the first of the session's WinogradCandidates with an implementation that reads it (at its
  // own count, another implementation). Null if none does.
  Result<std::optional<WinogradMatch>> MatchStoredWinograd(const ConvGeometry& g,
                                                           int threads) const {
    for (const WinogradCandidate& candidate : WinogradCandidates(threads)) {
      ThreadBudget budget(candidate.made_for);
      EPCTX_ASSIGN_OR_RETURN(auto pd, ConvPrimitiveDescReading(g, config_, format_));
      if (!pd.has_value()) continue;
      if (candidate.only_without_per_thread_buffers) {
        EPCTX_ASSIGN_OR_RETURN(bool shared, ScratchpadOfOneThread(g, config_, format_, *pd));
        if (!shared) continue;
      }
      return std::optional<WinogradMatch>(
          WinogradMatch{std::move(*pd), candidate.made_for, candidate.run_with});
    }
    return std::optional<WinogradMatch>();
  }

  Result<CachedPrimitive> Make(const ConvGeometry& g, int threads) const {
    ThreadBudget budget(threads);
    EPCTX_ASSIGN_OR_RETURN(auto pd, MakeConvPrimitiveDesc(g, config_, nullptr));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> wanted, EncodeWeightFormat(pd.weights_desc()));
    int made_for = threads;  // the count the primitive is made for
    int run_threads = 0;     // the count it runs with, when not the session's
    if (wanted != format_ && config_.winograd) {
      EPCTX_ASSIGN_OR_RETURN(std::optional<WinogradMatch> match, MatchStoredWinograd(g, threads));
      if (match.has_value()) {
        pd = std::move(match->pd);
        wanted = format_;
        made_for = match->made_for;
        run_threads = match->run_threads;
      }
    }
    if (wanted != format_) {
      // Another shape than the one packed for (or another CPU tier): a primitive that reads the
      // stored layout.
      EPCTX_ASSIGN_OR_RETURN(dnnl::memory::desc stored,
                             StoredWeightLayout(format_, wanted, pd.weights_desc().data_type()));
      EPCTX_ASSIGN_OR_RETURN(pd, MakeConvPrimitiveDesc(g, config_, &stored));
    }
    CachedPrimitive out;
    try {
      {
        ThreadBudget creation(made_for);
        out.primitive = dnnl::convolution_forward(pd);
      }
      out.threads = run_threads;
      out.scratchpad_bytes = pd.scratchpad_desc().get_size();
      out.implementation = std::string("onednn:") + pd.impl_info_str();
      out.weights = pd.weights_desc();
      out.bias = pd.bias_desc();
      out.residual = ActivationDesc(g.dst_dims(), config_.dst_layout);
    } catch (const dnnl::error& e) {
      return FromDnnlError(e, "creating a convolution");
    }
    if (config_.bf16) {
      EPCTX_RETURN_IF_ERROR(AddSourceConversion(
          out, ActivationDesc(g.src_dims(), config_.src_layout), pd.src_desc()));
    }
    return out;
  }

  DataType weight_type() const { return PackedFloatWeightType(config_.bf16); }

  WindowAttrs window_;
  int64_t group_ = 1;
  std::vector<int64_t> weight_dims_;
  std::vector<int64_t> format_;
  uint64_t format_hash_ = 0;
  ConvConfig config_;
  // Our own code for the shapes it takes, when it takes the node's (own_blocked_conv.h).
  std::optional<OwnBlockedConv> own_;

  PrimitiveMemo memo_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateDnnlConv(const NodeInfo& node) {
  return DnnlConvKernel::Create(node);
}

}  // namespace epctx::exec::kernels::onednn
