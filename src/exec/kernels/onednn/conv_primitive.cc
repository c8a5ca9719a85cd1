#include "exec/kernels/onednn/conv_primitive.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/onednn/runtime.h"
#include "exec/kernels/onednn/weight_format.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {

std::vector<int64_t> ConvGeometry::src_dims() const {
  std::vector<int64_t> d{batch, in_channels};
  d.insert(d.end(), in_spatial.begin(), in_spatial.end());
  return d;
}

std::vector<int64_t> ConvGeometry::dst_dims() const {
  std::vector<int64_t> d{batch, out_channels};
  d.insert(d.end(), out_spatial.begin(), out_spatial.end());
  return d;
}

std::vector<int64_t> ConvGeometry::onnx_weight_dims() const {
  std::vector<int64_t> d{out_channels, in_channels / group};
  d.insert(d.end(), kernel.begin(), kernel.end());
  return d;
}

dnnl::memory::dims ConvGeometry::dnnl_weight_dims() const {
  dnnl::memory::dims d;
  if (group > 1) d.push_back(group);
  d.push_back(out_channels / group);
  d.push_back(in_channels / group);
  d.insert(d.end(), kernel.begin(), kernel.end());
  return d;
}

Result<ConvGeometry> ResolveConvGeometry(const WindowAttrs& window, int64_t group,
                                         std::span<const int64_t> weight_dims,
                                         std::span<const int64_t> src_dims) {
  EPCTX_ASSIGN_OR_RETURN(const ConvShape shape,
                         ResolveConvShape(window, group, src_dims, weight_dims));
  const Window3d& w = shape.window;
  ConvGeometry g;
  g.batch = shape.batch;
  g.in_channels = shape.in_channels;
  g.out_channels = shape.out_channels;
  g.group = shape.group;
  const size_t spatial = src_dims.size() - 2;
  for (size_t i = 0; i < spatial; ++i) {
    const size_t j = 3 - spatial + i;
    g.in_spatial.push_back(w.in[j]);
    g.kernel.push_back(w.kernel[j]);
    g.strides.push_back(w.stride[j]);
    g.dilations.push_back(w.dilation[j]);
    g.pad_begin.push_back(w.pad_begin[j]);
    g.pad_end.push_back(w.pad_end[j]);
    g.out_spatial.push_back(w.out[j]);
  }
  return g;
}

dnnl::memory::desc ActivationDesc(const std::vector<int64_t>& dims, ActivationLayout layout,
                                  dnnl::memory::data_type type) {
  return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()), type,
                            TagFor(layout, dims.size()));
}

namespace {

Result<dnnl::convolution_forward::primitive_desc> MakeIntegerConvPrimitiveDesc(
    const ConvGeometry& g, const ConvConfig& c, const dnnl::memory::desc* weights) {
  using dnnl::memory;
  for (size_t i = 0; i < g.pad_begin.size(); ++i) {
    if (g.pad_begin[i] != 0 || g.pad_end[i] != 0) {
      return EPCTX_ERROR(kInvalidArgument, "an integer convolution takes its input padded");
    }
  }
  if (c.winograd || !c.post_ops.empty() || c.output_scales.empty()) {
    return EPCTX_ERROR(kInvalidArgument,
                       "an integer convolution takes output scales, no Winograd, no post-ops");
  }
  const size_t rank = g.src_dims().size();
  const memory::format_tag channels_last = rank == 3   ? memory::format_tag::nwc
                                           : rank == 4 ? memory::format_tag::nhwc
                                                       : memory::format_tag::ndhwc;
  const memory::desc src(g.src_dims(), memory::data_type::u8, channels_last);
  const memory::desc dst(g.dst_dims(), memory::data_type::f32, channels_last);
  const memory::desc wei =
      weights != nullptr
          ? *weights
          : memory::desc(g.dnnl_weight_dims(), memory::data_type::s8, memory::format_tag::any);
  const memory::desc bias =
      c.has_bias ? memory::desc({g.out_channels}, memory::data_type::f32, memory::format_tag::x)
                 : memory::desc();
  memory::dims dilations;
  for (int64_t d : g.dilations) dilations.push_back(d - 1);
  const memory::dims zeros(g.strides.size(), 0);
  auto desc = dnnl::convolution_forward::desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wei, bias, dst,
      memory::dims(g.strides.begin(), g.strides.end()), dilations, zeros, zeros);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attr.set_output_scales(c.output_scales.size() == 1 ? 0 : 1 << 1, c.output_scales);
  return dnnl::convolution_forward::primitive_desc(desc, attr, CpuEngine());
}

}  // namespace

Result<dnnl::convolution_forward::primitive_desc> ConvWithPostOps(
    const dnnl::convolution_forward::desc& desc, std::span<const PostOp> ops,
    const dnnl::memory::desc& dst) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  EPCTX_ASSIGN_OR_RETURN(dnnl::post_ops chain, ToDnnlPostOps(ops, &dst));
  attr.set_post_ops(chain);
  return dnnl::convolution_forward::primitive_desc(desc, attr, CpuEngine());
}

namespace {

// A float convolution's operation descriptor and its destination (the residual post-op's
// layout).
struct FloatConvDesc {
  dnnl::convolution_forward::desc op;
  dnnl::memory::desc dst;
};

FloatConvDesc MakeFloatConvDesc(const ConvGeometry& g, const ConvConfig& c,
                                const dnnl::memory::desc* weights) {
  using dnnl::memory;
  const memory::data_type product_type = c.bf16 ? memory::data_type::bf16 : memory::data_type::f32;
  const memory::desc src = ActivationDesc(g.src_dims(), c.src_layout, product_type);
  const memory::desc dst = ActivationDesc(g.dst_dims(), c.dst_layout);
  const memory::desc wei = weights != nullptr ? *weights
                                              : memory::desc(g.dnnl_weight_dims(), product_type,
                                                             memory::format_tag::any);
  const memory::desc bias =
      c.has_bias ? memory::desc({g.out_channels}, memory::data_type::f32, memory::format_tag::x)
                 : memory::desc();
  memory::dims dilations;
  for (int64_t d : g.dilations) dilations.push_back(d - 1);  // oneDNN counts the gaps
  const auto alg =
      c.winograd ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct;
  return FloatConvDesc{
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, src, wei, bias, dst,
                                      memory::dims(g.strides.begin(), g.strides.end()), dilations,
                                      memory::dims(g.pad_begin.begin(), g.pad_begin.end()),
                                      memory::dims(g.pad_end.begin(), g.pad_end.end())),
      dst};
}

Status CheckOutputWidth(const ConvGeometry& g) {
  if (!g.out_spatial.empty() && g.out_spatial.back() > kMaxConvOutputWidth) {
    return EPCTX_ERROR(kUnsupported,
                       "a convolution of {} by {} writes rows {} wide; oneDNN's convolutions are "
                       "made here for at most {} (creating one takes memory per column)",
                       fmt::join(g.src_dims(), "x"), fmt::join(g.onnx_weight_dims(), "x"),
                       g.out_spatial.back(), kMaxConvOutputWidth);
  }
  return Status::Ok();
}

Status ConvError(const dnnl::error& e, const ConvGeometry& g, const ConvConfig& c) {
  return FromDnnlError(e, fmt::format("a {}{}convolution of {} by {}", c.bf16 ? "bfloat16 " : "",
                                      c.winograd ? "Winograd " : "", fmt::join(g.src_dims(), "x"),
                                      fmt::join(g.onnx_weight_dims(), "x")));
}

// Calls `visit` with each of oneDNN's implementations of a float problem at the current thread
// budget, in its order of preference, until it returns true. The operation descriptor lives
// here: oneDNN's iterator points at it, so a descriptor must not be advanced once it is gone.
template <typename Visit>
Status ForEachFloatConvImplementation(const ConvGeometry& g, const ConvConfig& c, Visit visit) {
  EPCTX_RETURN_IF_ERROR(CheckOutputWidth(g));
  try {
    const FloatConvDesc desc = MakeFloatConvDesc(g, c, nullptr);
    EPCTX_ASSIGN_OR_RETURN(auto pd, ConvWithPostOps(desc.op, c.post_ops, desc.dst));
    do {
      EPCTX_ASSIGN_OR_RETURN(bool done, visit(pd));
      if (done) return Status::Ok();
    } while (pd.next_impl());
  } catch (const dnnl::error& e) {
    return ConvError(e, g, c);
  }
  return Status::Ok();
}

}  // namespace

Result<dnnl::convolution_forward::primitive_desc> MakeConvPrimitiveDesc(
    const ConvGeometry& g, const ConvConfig& c, const dnnl::memory::desc* weights) {
  EPCTX_RETURN_IF_ERROR(CheckOutputWidth(g));
  try {
    if (c.integer) return MakeIntegerConvPrimitiveDesc(g, c, weights);
    const FloatConvDesc desc = MakeFloatConvDesc(g, c, weights);
    return ConvWithPostOps(desc.op, c.post_ops, desc.dst);
  } catch (const dnnl::error& e) {
    return ConvError(e, g, c);
  }
}

Result<bool> ConvIsOptimized(const ConvGeometry& g, const ConvConfig& c) {
  EPCTX_ASSIGN_OR_RETURN(auto pd, MakeConvPrimitiveDesc(g, c, nullptr));
  return std::string_view(pd.impl_info_str()).rfind("ref", 0) != 0;
}

Result<std::optional<dnnl::convolution_forward::primitive_desc>> ConvPrimitiveDescReading(
    const ConvGeometry& g, const ConvConfig& c, std::span<const int64_t> format) {
  std::optional<dnnl::convolution_forward::primitive_desc> found;
  if (c.integer) {
    EPCTX_ASSIGN_OR_RETURN(auto pd, MakeConvPrimitiveDesc(g, c, nullptr));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> got, EncodeWeightFormat(pd.weights_desc()));
    if (std::ranges::equal(got, format)) found = std::move(pd);
    return found;
  }
  EPCTX_RETURN_IF_ERROR(ForEachFloatConvImplementation(
      g, c, [&](const dnnl::convolution_forward::primitive_desc& pd) -> Result<bool> {
        EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> got, EncodeWeightFormat(pd.weights_desc()));
        if (!std::ranges::equal(got, format)) return false;
        found = pd;
        return true;
      }));
  return found;
}

std::vector<WinogradCandidate> WinogradCandidates(int threads) {
  std::vector<WinogradCandidate> candidates = {{threads, 0, false}};
  for (auto it = std::rbegin(kWinogradThreadCounts); it != std::rend(kWinogradThreadCounts); ++it) {
    if (*it > threads && *it <= 2 * threads) candidates.push_back({*it, 0, false});
  }
  for (auto it = std::rbegin(kWinogradThreadCounts); it != std::rend(kWinogradThreadCounts); ++it) {
    if (*it > 2 * threads) candidates.push_back({*it, 0, true});
  }
  for (int t : kWinogradThreadCounts) {
    if (t < threads) candidates.push_back({t, t, false});
  }
  return candidates;
}

Result<bool> ScratchpadOfOneThread(const ConvGeometry& g, const ConvConfig& c,
                                   std::span<const int64_t> format,
                                   const dnnl::convolution_forward::primitive_desc& pd) {
  ThreadBudget one(1);
  EPCTX_ASSIGN_OR_RETURN(auto one_thread, ConvPrimitiveDescReading(g, c, format));
  return one_thread.has_value() &&
         one_thread->scratchpad_desc().get_size() == pd.scratchpad_desc().get_size();
}

Result<std::vector<ConvImplementationLayout>> ConvImplementations(const ConvGeometry& g,
                                                                  const ConvConfig& c) {
  std::vector<ConvImplementationLayout> found;
  EPCTX_RETURN_IF_ERROR(ForEachFloatConvImplementation(
      g, c, [&](const dnnl::convolution_forward::primitive_desc& pd) -> Result<bool> {
        ConvImplementationLayout& impl = found.emplace_back();
        EPCTX_ASSIGN_OR_RETURN(impl.layout, EncodeWeightFormat(pd.weights_desc()));
        impl.scratchpad_bytes = pd.scratchpad_desc().get_size();
        return false;
      }));
  return found;
}

namespace {

// From this output side up, the larger Winograd tile first whatever oneDNN prefers. Measured on a
// Zen 4 at 1 and 2 threads, oneDNN 2.6's F(4x4, 3x3) took 0.55-0.9x the time of its F(2x2, 3x3)
// on images of 27 to 56 pixels a side (DenseNet-121's 28x28 128 -> 32 layers: 0.19 against 0.27
// ms at 1 thread), which it often ranks first; on 7 to 14 pixels, 0.8-2x (ResNet-50's 7x7
// 512 -> 512: 2.0 against 1.3 ms).
//
// Below it, no F(4x4, 3x3) at all: on such images its tiles overhang the output and its weights
// are 4x the filter's, and the direct convolution did better. ResNet-50's five 14x14 256 -> 256
// layers on a Zen 5, where F(2x2, 3x3)'s layout changes with the thread count and so is not
// packed: per node at 1 thread 1.37 ms direct against 1.45-1.56 F(4x4), at 2 threads 0.93 against
// 0.97 (mean of the five); F(4x4)'s 16.9 MB scratchpad (the model's largest) and 35 MB more of blob
// gone, the first inference at 1 thread 6 ms shorter (median of 6 alternating processes).
constexpr int64_t kLargeWinogradImage = 27;
constexpr int64_t kLargeWinogradTile = 6;  // WinogradTile of F(4x4, 3x3)

}  // namespace

Result<std::vector<int64_t>> PortableWinogradFormat(const ConvGeometry& g, const ConvConfig& c) {
  ConvConfig wino = c;
  wino.winograd = true;
  std::map<int, std::vector<ConvImplementationLayout>> implementations;  // by thread count
  for (int threads : kWinogradThreadCounts) {
    ThreadBudget budget(threads);
    EPCTX_ASSIGN_OR_RETURN(implementations[threads], ConvImplementations(g, wino));
  }
  // The implementation made for `threads` that reads `layout`, or null.
  auto reading = [&](const std::vector<int64_t>& layout,
                     int threads) -> const ConvImplementationLayout* {
    for (const ConvImplementationLayout& impl : implementations.at(threads)) {
      if (impl.layout == layout) return &impl;
    }
    return nullptr;
  };
  // As the kernel looks (WinogradCandidates), for a primitive run with the session's threads.
  auto served = [&](const ConvImplementationLayout& packed, int threads) {
    for (const WinogradCandidate& candidate : WinogradCandidates(threads)) {
      if (candidate.run_with != 0) continue;
      const ConvImplementationLayout* found = reading(packed.layout, candidate.made_for);
      if (found == nullptr) continue;
      if (!candidate.only_without_per_thread_buffers ||
          found->scratchpad_bytes == packed.scratchpad_bytes) {
        return true;
      }
    }
    return false;
  };
  std::vector<ConvImplementationLayout> choices = implementations.at(1);
  if (std::ranges::all_of(g.out_spatial,
                          [](int64_t side) { return side >= kLargeWinogradImage; })) {
    std::ranges::stable_sort(
        choices, std::ranges::greater(),
        [](const ConvImplementationLayout& impl) { return WinogradTile(impl.layout); });
  } else {
    std::erase_if(choices, [](const ConvImplementationLayout& impl) {
      return WinogradTile(impl.layout) == kLargeWinogradTile;
    });
  }
  for (const ConvImplementationLayout& choice : choices) {
    if (std::ranges::all_of(kWinogradThreadCounts,
                            [&](int threads) { return served(choice, threads); })) {
      return choice.layout;
    }
  }
  const size_t left_out = implementations.at(1).size() - choices.size();
  return EPCTX_ERROR(kUnsupported,
                     "none of oneDNN's {} Winograd layouts for 1 thread{} is found by a session "
                     "of every thread count without running on fewer threads",
                     choices.size(),
                     left_out == 0 ? std::string()
                                   : fmt::format(" ({} F(4x4, 3x3) left out: an image under {} "
                                                 "pixels a side takes none)",
                                                 left_out, kLargeWinogradImage));
}

std::string ConvKey(const ConvGeometry& g, const ConvConfig& c, int threads) {
  std::string key = fmt::format(
      "conv t{} n{} c{} m{} g{} in{} k{} s{} d{} pb{} pe{} L{}{} b{} w{}", threads, g.batch,
      g.in_channels, g.out_channels, g.group, fmt::join(g.in_spatial, ","),
      fmt::join(g.kernel, ","), fmt::join(g.strides, ","), fmt::join(g.dilations, ","),
      fmt::join(g.pad_begin, ","), fmt::join(g.pad_end, ","), static_cast<int>(c.src_layout),
      static_cast<int>(c.dst_layout), c.has_bias ? 1 : 0, c.winograd ? 1 : 0);
  if (c.bf16) key += " bf16";
  for (const PostOp& op : c.post_ops) {
    key += fmt::format(" p{}:{}:{}", static_cast<int>(op.kind), op.alpha, op.beta);
  }
  if (c.integer) {
    // The scales are part of the primitive: exact bits, so that equal keys mean equal scales.
    key += " u8s8f32 scales";
    for (float s : c.output_scales) key += fmt::format(" {:08x}", std::bit_cast<uint32_t>(s));
  }
  return key;
}

Result<Tensor*> CheckedConvOutput(KernelContext& ctx, const ConvGeometry& g,
                                  ActivationLayout dst_layout, const Tensor& w, DataType w_type,
                                  size_t w_bytes, const Tensor* b, const Tensor* r) {
  if (w.dtype() != w_type || w.byte_size() != w_bytes) {
    return EPCTX_ERROR(kInvalidArgument, "packed W holds {} bytes; its layout needs {}",
                       w.byte_size(), w_bytes);
  }
  if (b != nullptr && (b->dtype() != DataType::kFloat32 || b->element_count() != g.out_channels)) {
    return EPCTX_ERROR(kInvalidArgument, "input B has shape {}, expected [{}]",
                       ShapeToString(b->shape()), g.out_channels);
  }
  const std::vector<int64_t> y_shape = PhysicalShape(g.dst_dims(), dst_layout);
  if (r != nullptr && (r->dtype() != DataType::kFloat32 || r->shape() != y_shape)) {
    return EPCTX_ERROR(kInvalidArgument, "residual R has shape {}, expected {}",
                       ShapeToString(r->shape()), ShapeToString(y_shape));
  }
  return ctx.AllocateOutput(0, DataType::kFloat32, y_shape);
}

}  // namespace epctx::exec::kernels::onednn
