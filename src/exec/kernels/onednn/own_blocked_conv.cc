#include "exec/kernels/onednn/own_blocked_conv.h"

#include <algorithm>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/onednn/blocked_conv1x1.h"
#include "exec/kernels/onednn/blocked_depthwise_conv.h"
#include "exec/kernels/onednn/runtime.h"
#include "exec/kernels/onednn/weight_format.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {
namespace {

bool All(const std::vector<int64_t>& v, int64_t value) {
  return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == value; });
}

// The encoding of a float32 weight of oneDNN dims `dims` in `tag`, and its bytes.
Result<std::pair<std::vector<int64_t>, size_t>> Encoded(const dnnl::memory::dims& dims,
                                                        dnnl::memory::format_tag tag) {
  try {
    const dnnl::memory::desc desc(dims, dnnl::memory::data_type::f32, tag);
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> encoded, EncodeWeightFormat(desc));
    return std::make_pair(std::move(encoded), desc.get_size());
  } catch (const dnnl::error& e) {
    return FromDnnlError(e, "describing a convolution's weights");
  }
}

bool PointwiseGeometry(const ConvGeometry& g) {
  if (g.group != 1 || g.in_spatial != g.out_spatial) return false;
  for (size_t i = 0; i < g.kernel.size(); ++i) {
    if (g.kernel[i] != 1 || g.strides[i] != 1 || g.pad_begin[i] != 0 || g.pad_end[i] != 0) {
      return false;
    }
  }
  return true;
}

bool DepthwiseGeometry(const ConvGeometry& g) {
  return g.group == g.in_channels && g.group == g.out_channels && g.kernel.size() == 2 &&
         All(g.dilations, 1) && BlockedDepthwiseWindowSupported(g.kernel[1], g.strides[1]) &&
         g.out_spatial[1] >= kMinOwnDepthwiseWidth;
}

// Zeros the lanes past the output channels in the last block of each image of `layout`.
void ZeroPaddedChannels(const ConvGeometry& g, ActivationLayout layout, float* y) {
  const int64_t lanes = ChannelBlock(layout);
  const int64_t used = g.out_channels % lanes;
  if (used == 0) return;
  const int64_t blocks = (g.out_channels + lanes - 1) / lanes;
  int64_t pixels = 1;
  for (int64_t d : g.out_spatial) pixels *= d;
  for (int64_t n = 0; n < g.batch; ++n) {
    float* last = y + (n * blocks + blocks - 1) * pixels * lanes;
    for (int64_t p = 0; p < pixels; ++p) {
      std::fill(last + p * lanes + used, last + (p + 1) * lanes, 0.0f);
    }
  }
}

}  // namespace

Result<std::optional<OwnBlockedConv>> OwnBlockedConv::For(std::span<const int64_t> weight_dims,
                                                          int64_t group, const WindowAttrs& window,
                                                          const ConvConfig& config,
                                                          std::span<const int64_t> format,
                                                          const ValueDesc& input) {
  const std::optional<OwnBlockedConv> none;
  if (config.bf16 || config.winograd || config.integer ||
      config.src_layout != ActivationLayout::kBlocked16 ||
      config.dst_layout != ActivationLayout::kBlocked16) {
    return none;
  }
  // The leading plain post-ops in registers; the rest (activations, a Sigmoid: EfficientNet's
  // squeeze-and-excitation) on the output after.
  const std::span<const PostOp> ops = config.post_ops;
  for (const PostOp& op : ops.subspan(LeadingPlainPostOpCount(ops))) {
    if (!AppliedToABuffer(op.kind)) return none;
  }
  const size_t rank = weight_dims.size();
  const std::vector<int64_t> spatial(weight_dims.begin() + 2, weight_dims.end());
  using tag = dnnl::memory::format_tag;
  if (group == 1 && All(spatial, 1) && Blocked1x1ConvAvailable()) {
    // A 1x1 window reads no padding at stride 1, whatever auto_pad says.
    if (!All(window.strides, 1) || !All(window.pads, 0)) return none;
    const tag blocked = rank == 3 ? tag::ABc16b16a : rank == 4 ? tag::ABcd16b16a : tag::ABcde16b16a;
    EPCTX_ASSIGN_OR_RETURN(
        auto want, Encoded(dnnl::memory::dims(weight_dims.begin(), weight_dims.end()), blocked));
    if (want.first != std::vector<int64_t>(format.begin(), format.end())) return none;
    return std::optional<OwnBlockedConv>(OwnBlockedConv(Kind::kPointwise, want.second));
  }
  // Depthwise: one input and one output channel per group, 2-D, a row width known at compile.
  if (rank != 4 || weight_dims[1] != 1 || weight_dims[0] != group || !All(window.dilations, 1) ||
      !BlockedDepthwiseConvAvailable() || !input.shape_known) {
    return none;
  }
  for (int64_t d : input.shape) {
    if (d < 0) return none;
  }
  auto src = LogicalShape(input.shape, config.src_layout, group);
  if (!src.ok()) return none;
  auto g = ResolveConvGeometry(window, group, weight_dims, *src);
  if (!g.ok() || !DepthwiseGeometry(*g)) return none;
  EPCTX_ASSIGN_OR_RETURN(auto want,
                         Encoded({group, 1, 1, weight_dims[2], weight_dims[3]}, tag::Goihw16g));
  if (want.first != std::vector<int64_t>(format.begin(), format.end())) return none;
  return std::optional<OwnBlockedConv>(OwnBlockedConv(Kind::kDepthwise, want.second));
}

bool OwnBlockedConv::Takes(const ConvGeometry& g) const {
  return kind_ == Kind::kPointwise ? PointwiseGeometry(g) : DepthwiseGeometry(g);
}

std::string_view OwnBlockedConv::name() const {
  return kind_ == Kind::kPointwise ? "epctx:blocked_1x1" : "epctx:blocked_dw";
}

Status OwnBlockedConv::Run(KernelContext& ctx, const ConvGeometry& g, const ConvConfig& config,
                           const Tensor& x, const Tensor& w, const Tensor* b,
                           const Tensor* r) const {
  EPCTX_ASSIGN_OR_RETURN(Tensor * y, CheckedConvOutput(ctx, g, config.dst_layout, w,
                                                       DataType::kFloat32, weight_bytes_, b, r));
  if (y->element_count() == 0) return Status::Ok();
  float* out = y->mutable_data_as<float>();
  const float* bias = b == nullptr ? nullptr : b->data_as<float>();
  const std::span<const PostOp> ops = config.post_ops;
  const size_t in_registers = LeadingPlainPostOpCount(ops);
  const float* residual = r == nullptr ? nullptr : r->data_as<float>();
  if (kind_ == Kind::kPointwise) {
    Blocked1x1Problem p;
    p.batch = g.batch;
    p.in_channels = g.in_channels;
    p.out_channels = g.out_channels;
    p.pixels = 1;
    for (int64_t d : g.out_spatial) p.pixels *= d;
    Blocked1x1Conv(p, x.data_as<float>(), w.data_as<float>(), bias, ops.first(in_registers),
                   residual, out, ctx.num_threads());
  } else {
    BlockedDepthwiseProblem p;
    p.batch = g.batch;
    p.channels = g.out_channels;
    p.in_h = g.in_spatial[0];
    p.in_w = g.in_spatial[1];
    p.out_h = g.out_spatial[0];
    p.out_w = g.out_spatial[1];
    p.kernel_h = g.kernel[0];
    p.kernel_w = g.kernel[1];
    p.stride_h = g.strides[0];
    p.stride_w = g.strides[1];
    p.pad_top = g.pad_begin[0];
    p.pad_left = g.pad_begin[1];
    BlockedDepthwiseConv(p, x.data_as<float>(), w.data_as<float>(), bias, ops.first(in_registers),
                         residual, out, ctx.num_threads());
  }
  if (in_registers < ops.size()) {
    ApplyPostOpsToBuffer(ops.subspan(in_registers), out, y->element_count(), ctx.num_threads());
    ZeroPaddedChannels(g, config.dst_layout, out);  // a Sigmoid of 0 is 1/2
  }
  return Status::Ok();
}

}  // namespace epctx::exec::kernels::onednn
