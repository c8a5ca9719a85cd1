#include "compile/packing/pack_weights.h"

#include <functional>
#include <optional>

#include "compile/packing/layouts.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/nn/window.h"
#include "exec/kernels/onednn/compute_type.h"
#include "exec/kernels/onednn/isa.h"
#include "exec/kernels/onednn/post_ops.h"
#include "exec/kernels/onednn/runtime.h"
#include "exec/kernels/onednn/weight_format.h"
#include "exec/kernels/onednn/weight_packing.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

bool PackGemm(IrGraph& graph, IrNode& n) {
  if (n.inputs.size() < 2 || n.inputs[1] < 0) return false;
  const IrValue& b = graph.values[static_cast<size_t>(n.inputs[1])];
  if (!b.constant || b.constant->dtype != DataType::kFloat32 || b.shape.size() != 2) return false;
  if (b.constant->layout == static_cast<uint32_t>(PackLayout::kGemmBTransposed)) return false;
  const IrAttribute* tb = n.FindAttr("transB");
  const IrAttribute* al = n.FindAttr("alpha");
  bool trans_b = tb && tb->i != 0;
  float alpha = al ? al->f : 1.0f;
  // Source B is [K, N] (transB=0) or [N, K] (transB=1); the packed form is [N, K].
  int64_t rows = b.shape[0], cols = b.shape[1];
  int64_t n_dim = trans_b ? rows : cols;
  int64_t k_dim = trans_b ? cols : rows;
  std::shared_ptr<const ConstantData> source = b.constant;
  auto make = [source, trans_b, alpha, n_dim, k_dim]() -> Result<Tensor> {
    EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const ConstantData> from, Materialize(source));
    const float* src = reinterpret_cast<const float*>(from->bytes.data());
    EPCTX_ASSIGN_OR_RETURN(Tensor packed, Tensor::Allocate(DataType::kFloat32, {n_dim, k_dim}));
    float* dst = packed.mutable_data_as<float>();
    for (int64_t i = 0; i < n_dim; ++i) {
      for (int64_t k = 0; k < k_dim; ++k) {
        float v = trans_b ? src[i * k_dim + k] : src[k * n_dim + i];
        dst[i * k_dim + k] = v * alpha;
      }
    }
    from->ReleasePages();
    return packed;
  };
  std::string name = b.name + "_packed";
  n.inputs[1] = graph.AddConstant(
      name, ConstantData::Deferred(DataType::kFloat32, {n_dim, k_dim},
                                   static_cast<uint32_t>(PackLayout::kGemmBTransposed), make));
  n.SetInt("transB", 1);
  n.SetFloat("alpha", 1.0f);
  return true;
}

void TagConvFilter(IrGraph& graph, const IrNode& n) {
  if (n.inputs.size() < 2 || n.inputs[1] < 0) return;
  IrValue& w = graph.values[static_cast<size_t>(n.inputs[1])];
  if (!w.constant || w.constant->layout != 0) return;
  // Copy-on-write of the descriptor only: the bytes stay shared and in place.
  auto tagged = std::make_shared<ConstantData>(*w.constant);
  tagged->layout = static_cast<uint32_t>(PackLayout::kConvFilterOihw);
  w.constant = std::move(tagged);
}

namespace onednn = exec::kernels::onednn;

// Winograd applies to 2-D 3x3 convolutions with unit stride and dilation, no groups, reading
// and writing the channel-blocked layout, on shapes known at compile time, where oneDNN has it.
bool WinogradCandidate(const onednn::ConvGeometry& g, const onednn::ConvConfig& c,
                       bool static_shape) {
  if (!onednn::HasWinogradConvolutions()) return false;
  if (!static_shape || g.kernel.size() != 2 || g.group != 1) return false;
  if (c.src_layout != onednn::ActivationLayout::kBlocked16 ||
      c.dst_layout != onednn::ActivationLayout::kBlocked16) {
    return false;
  }
  for (size_t i = 0; i < 2; ++i) {
    if (g.kernel[i] != 3 || g.strides[i] != 1 || g.dilations[i] != 1) return false;
  }
  return true;
}

// Packs the weight of a oneDNN node from its source constant's bytes.
using PackFn = std::function<Result<onednn::PackedWeight>(const std::byte* source)>;

// Input 1 of `n` (its weight) becomes the packed weight `plan` describes, packed by `pack` only
// when the blob is written (a deferred constant); weights_shape and weights_format say what it
// holds.
void AttachPacked(IrGraph& graph, IrNode& n, const onednn::PackedWeightPlan& plan, PackFn pack) {
  const IrValue& w = graph.values[static_cast<size_t>(n.inputs[1])];
  std::vector<int64_t> shape = w.shape;
  const std::string name = w.name + "_packed";
  std::shared_ptr<const ConstantData> source = w.constant;
  auto make = [source, format = plan.format, pack = std::move(pack),
               node = fmt::format("{} node '{}'", n.op_type, n.name)]() -> Result<Tensor> {
    EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const ConstantData> from, Materialize(source));
    Result<onednn::PackedWeight> packed = pack(from->bytes.data());
    from->ReleasePages();
    if (!packed.ok()) {
      return Status(packed.status().code(),
                    fmt::format("packing the weights of {}: {}", node, packed.status().message()));
    }
    // The node's weights_format was recorded from the plan: the bytes must be in that layout.
    if (packed->format != format) {
      return EPCTX_ERROR(kInternal, "packing the weights of {}: packed as {}, planned as {}", node,
                         onednn::DescribeWeightFormat(packed->format),
                         onednn::DescribeWeightFormat(format));
    }
    return std::move(packed->bytes);
  };
  std::shared_ptr<ConstantData> packed = ConstantData::Deferred(
      plan.dtype, {plan.elements}, static_cast<uint32_t>(PackLayout::kOneDnn), std::move(make));
  packed->required_cpu_features = plan.required_cpu_features;
  n.inputs[1] = graph.AddConstant(name, std::move(packed));
  n.SetInts(ops::kWeightsShape, std::move(shape));
  n.SetInts(ops::kWeightsFormat, plan.format);
}

// A node ComputeInBf16 marked whose problem oneDNN has no bfloat16 kernel for (`why`) computes
// in float32: `bf16` (its config's) is cleared, the mark removed, and `plan` asked again.
template <typename Plan>
Result<onednn::PackedWeightPlan> KeepInFloat32(IrNode& n, bool& bf16, const Status& why,
                                               Plan plan) {
  Logger().debug("{}: stays float32: {}", n.name, why.message());
  bf16 = false;
  n.RemoveAttr(ops::kComputeType);
  return plan();
}

Result<bool> PackDnnlConv(IrGraph& graph, IrNode& n) {
  if (n.FindAttr(ops::kWeightsFormat) != nullptr) return false;  // packed already
  const IrValue& x = graph.values[static_cast<size_t>(n.inputs[0])];
  const IrValue& w = graph.values[static_cast<size_t>(n.inputs[1])];
  // The logical input shape (the layout pass may have made X's stored shape physical).
  std::vector<int64_t> src = x.shape;
  EPCTX_ASSIGN_OR_RETURN(int64_t src_layout, graph.AttributesOf(n).GetInt(ops::kSrcLayout, 0));
  if (src_layout != 0) {
    src.pop_back();
    src[1] = -1;  // the filter's channels, by CompileTimeConvOf
  }
  EPCTX_ASSIGN_OR_RETURN(CompileTimeConv problem, CompileTimeConvOf(graph, n, std::move(src)));
  const onednn::ConvGeometry& geometry = problem.geometry;
  onednn::ConvConfig& config = problem.config;
  Result<onednn::PackedWeightPlan> plan = onednn::PlanConvWeights(geometry, config);
  if (!plan.ok() && config.bf16) {
    plan = KeepInFloat32(n, config.bf16, plan.status(),
                         [&] { return onednn::PlanConvWeights(geometry, config); });
  }
  std::vector<int64_t> winograd_format;  // the stored Winograd layout, if the node takes one
  if (!config.bf16 && WinogradCandidate(geometry, config, x.fully_static())) {
    // Winograd does fewer multiplications on 3x3 stride-1 layers (oneDNN's F(2x2, 3x3) 2.25x,
    // F(4x4, 3x3) 4x); its layout serves one input shape, so only statically shaped layers take
    // it. The 1-thread layout, which sessions of other counts read too
    // (onednn::PortableWinogradFormat).
    onednn::ConvConfig winograd_config = config;
    winograd_config.winograd = true;
    Result<std::vector<int64_t>> portable =
        onednn::PortableWinogradFormat(geometry, winograd_config);
    if (!portable.ok()) {
      Logger().debug("{}: no Winograd: {}", n.name, portable.status().message());
    } else {
      onednn::ThreadBudget one_thread(1);
      Result<onednn::PackedWeightPlan> wino =
          onednn::PlanConvWeights(geometry, winograd_config, *portable);
      if (wino.ok()) {
        plan = std::move(wino);
        config = winograd_config;
        winograd_format = std::move(*portable);
        n.SetInt(ops::kWinograd, 1);
      }
    }
  }
  if (!plan.ok()) return plan.status();
  Logger().debug("{}: filter {} to be packed for {} as {}", n.name, ShapeToString(w.shape),
                 plan->implementation, onednn::DescribeWeightFormat(plan->format));
  AttachPacked(graph, n, *plan, [geometry, config, winograd_format](const std::byte* filter) {
    std::optional<onednn::ThreadBudget> one_thread;
    if (!winograd_format.empty()) one_thread.emplace(1);
    return onednn::PackConvWeights(geometry, config, reinterpret_cast<const float*>(filter),
                                   winograd_format);
  });
  return true;
}

// Rows assumed for packing when the activation's leading dims are unknown: oneDNN's matmul picks
// its weight layout from K, N and the CPU, and reads the stored one for any M.
constexpr int64_t kRepresentativeRows = 128;

// int8 weights are packed at once: whether they need VNNI, and whether this CPU's int8 kernels
// multiply them exactly, depends on their values and decides the fingerprint and the refusal
// while the passes run. They are the small weights (a quarter of the float's bytes).
std::shared_ptr<ConstantData> PackedConstant(Tensor bytes, uint64_t required_cpu_features) {
  auto data = std::make_shared<ConstantData>();
  auto holder = std::make_shared<Tensor>(std::move(bytes));
  data->dtype = holder->dtype();
  data->shape = holder->shape();
  data->bytes = std::span<const std::byte>(static_cast<const std::byte*>(holder->data()),
                                           holder->byte_size());
  data->owner = holder;
  data->layout = static_cast<uint32_t>(PackLayout::kOneDnn);
  data->required_cpu_features = required_cpu_features;
  return data;
}

// The rows of a matmul's activation A [..., K] when its leading dims are known, else the
// representative count.
int64_t PackingRows(const IrValue& a) {
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < a.shape.size(); ++i) {
    if (!a.shape_known || a.shape[i] < 0) return kRepresentativeRows;
    rows *= std::max<int64_t>(a.shape[i], 1);
  }
  return a.shape_known ? rows : kRepresentativeRows;
}

// Input 1 of `n` (its int8 weight) becomes the bytes packed now; weights_shape and
// weights_format say what they hold.
void AttachPackedNow(IrGraph& graph, IrNode& n, onednn::PackedWeight packed) {
  const IrValue& w = graph.values[static_cast<size_t>(n.inputs[1])];
  std::vector<int64_t> shape = w.shape;
  const std::string name = w.name + "_packed";
  n.inputs[1] = graph.AddConstant(
      name, PackedConstant(std::move(packed.bytes), packed.required_cpu_features));
  n.SetInts(ops::kWeightsShape, std::move(shape));
  n.SetInts(ops::kWeightsFormat, std::move(packed.format));
}

Result<bool> PackDnnlMatMul(IrGraph& graph, IrNode& n) {
  if (n.FindAttr(ops::kWeightsFormat) != nullptr) return false;  // packed already
  const IrValue& a = graph.values[static_cast<size_t>(n.inputs[0])];
  const IrValue& w = graph.values[static_cast<size_t>(n.inputs[1])];
  exec::Attributes attrs = graph.AttributesOf(n);
  onednn::MatMulConfig config;
  EPCTX_ASSIGN_OR_RETURN(config.post_ops, onednn::ParsePostOps(attrs));
  EPCTX_ASSIGN_OR_RETURN(config.bf16, onednn::ParseComputeBf16(attrs));
  config.has_bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  const onednn::MatMulGeometry geometry{PackingRows(a), w.shape[0], w.shape[1]};
  Result<onednn::PackedWeightPlan> planned = onednn::PlanMatMulWeights(geometry, config);
  if (!planned.ok() && config.bf16) {
    planned = KeepInFloat32(n, config.bf16, planned.status(),
                            [&] { return onednn::PlanMatMulWeights(geometry, config); });
  }
  EPCTX_ASSIGN_OR_RETURN(onednn::PackedWeightPlan plan, std::move(planned));
  // A float16 model's weight stays float16 where our kernels read it (computing in float32 all
  // the same): half the bytes in the blob, and half the bytes a decode step streams.
  bool narrow = false;
  if (!config.bf16 && w.constant->float16_values &&
      onednn::PrimitivePostOpsArePlain(config.post_ops)) {
    Result<onednn::PackedWeightPlan> half = onednn::Float16FormOf(plan, geometry.k, geometry.n);
    if (half.ok()) {
      plan = std::move(*half);
      narrow = true;
    } else {
      Logger().debug("{}: float16 weight stays float32: {}", n.name, half.status().message());
    }
  }
  Logger().debug("{}: weight {} to be packed for {} as {}", n.name, ShapeToString(w.shape),
                 plan.implementation, onednn::DescribeWeightFormat(plan.format));
  AttachPacked(graph, n, plan, [geometry, config, narrow, plan](const std::byte* b) {
    const float* values = reinterpret_cast<const float*>(b);
    if (narrow) return onednn::PackFloat16MatMulWeights(plan, geometry.k, geometry.n, values);
    return onednn::PackMatMulWeights(geometry, config, values, false, 1.0f);
  });
  return true;
}

Result<bool> PackDnnlMatMulInteger(IrGraph& graph, IrNode& n) {
  if (n.FindAttr(ops::kWeightsFormat) != nullptr) return false;  // packed already
  const IrValue& a = graph.values[static_cast<size_t>(n.inputs[0])];
  const IrValue& w = graph.values[static_cast<size_t>(n.inputs[1])];
  onednn::MatMulConfig config;
  config.integer = true;
  const onednn::MatMulGeometry geometry{PackingRows(a), w.shape[0], w.shape[1]};
  EPCTX_ASSIGN_OR_RETURN(
      onednn::PackedWeight packed,
      onednn::PackIntegerMatMulWeights(geometry, config,
                                       reinterpret_cast<const int8_t*>(w.constant->bytes.data())));
  Logger().debug("{}: int8 weight {} packed for {} as {}", n.name, ShapeToString(w.shape),
                 packed.implementation, onednn::DescribeWeightFormat(packed.format));
  AttachPackedNow(graph, n, std::move(packed));
  return true;
}

// The filter of a DnnlIntegerConv, packed for the convolution the kernel runs: on its input
// padded by the kernel, so without padding of its own.
Result<bool> PackDnnlIntegerConv(IrGraph& graph, IrNode& n) {
  if (n.FindAttr(ops::kWeightsFormat) != nullptr) return false;  // packed already
  const IrValue& x = graph.values[static_cast<size_t>(n.inputs[0])];
  const IrValue& w = graph.values[static_cast<size_t>(n.inputs[1])];
  exec::Attributes attrs = graph.AttributesOf(n);
  EPCTX_ASSIGN_OR_RETURN(exec::kernels::WindowAttrs window, exec::kernels::ParseWindowAttrs(attrs));
  EPCTX_ASSIGN_OR_RETURN(int64_t group, attrs.GetInt("group", 1));
  onednn::ConvConfig config;
  config.integer = true;
  config.has_bias = true;
  EPCTX_ASSIGN_OR_RETURN(config.output_scales, attrs.GetFloats(ops::kOutputScales));
  std::vector<int64_t> src = x.shape_known ? x.shape : std::vector<int64_t>{-1, -1, -1, -1};
  if (src.size() != 4) return EPCTX_ERROR(kInvalidArgument, "input X is not 4-D");
  src = RepresentativeConvInput(std::move(src), w.shape, group, window.dilations);
  EPCTX_ASSIGN_OR_RETURN(onednn::ConvGeometry geometry,
                         onednn::ResolveConvGeometry(window, group, w.shape, src));
  for (size_t i = 0; i < geometry.in_spatial.size(); ++i) {
    geometry.in_spatial[i] += geometry.pad_begin[i] + geometry.pad_end[i];
    geometry.pad_begin[i] = geometry.pad_end[i] = 0;
  }
  EPCTX_ASSIGN_OR_RETURN(
      onednn::PackedWeight packed,
      onednn::PackIntegerConvWeights(geometry, config,
                                     reinterpret_cast<const int8_t*>(w.constant->bytes.data())));
  Logger().debug("{}: int8 filter {} packed for {} as {}", n.name, ShapeToString(w.shape),
                 packed.implementation, onednn::DescribeWeightFormat(packed.format));
  AttachPackedNow(graph, n, std::move(packed));
  return true;
}

}  // namespace

Result<PassStats> PackWeights(IrGraph& graph) {
  PassStats stats{"pack-weights", 0};
  for (IrNode& n : graph.nodes) {
    bool onnx = n.domain.empty();
    bool epctx = n.domain == ops::kDomain;
    if ((onnx && n.op_type == "Gemm") || (epctx && n.op_type == ops::kFusedGemm)) {
      if (PackGemm(graph, n)) stats.changed++;
    } else if (epctx &&
               (n.op_type == ops::kDnnlMatMul || n.op_type == ops::kDnnlConv ||
                n.op_type == ops::kDnnlMatMulInteger || n.op_type == ops::kDnnlIntegerConv)) {
      Result<bool> packed = n.op_type == ops::kDnnlConv            ? PackDnnlConv(graph, n)
                            : n.op_type == ops::kDnnlMatMulInteger ? PackDnnlMatMulInteger(graph, n)
                            : n.op_type == ops::kDnnlIntegerConv   ? PackDnnlIntegerConv(graph, n)
                                                                   : PackDnnlMatMul(graph, n);
      if (!packed.ok()) {
        return Status(packed.status().code(),
                      fmt::format("packing the weights of {} node '{}': {}", n.op_type, n.name,
                                  packed.status().message()));
      }
      if (*packed) stats.changed++;
    } else if ((onnx && n.op_type == "Conv") || (epctx && n.op_type == ops::kFusedConv)) {
      TagConvFilter(graph, n);
    }
  }
  return stats;
}

std::vector<int64_t> RepresentativeConvInput(std::vector<int64_t> src,
                                             std::span<const int64_t> filter_dims, int64_t group,
                                             std::span<const int64_t> dilations) {
  constexpr int64_t kRepresentativeBatch = 1;
  constexpr int64_t kRepresentativeSpatial = 32;
  if (!src.empty() && src[0] < 0) src[0] = kRepresentativeBatch;
  if (src.size() > 1 && src[1] < 0 && filter_dims.size() > 1) src[1] = filter_dims[1] * group;
  for (size_t i = 2; i < src.size() && i < filter_dims.size(); ++i) {
    // Large enough for the dilated kernel whatever the padding.
    const size_t d = i - 2;
    const int64_t dilation = d < dilations.size() ? dilations[d] : 1;
    if (src[i] < 0) src[i] = std::max(kRepresentativeSpatial, (filter_dims[i] - 1) * dilation + 1);
  }
  return src;
}

Result<CompileTimeConv> CompileTimeConvOf(const IrGraph& graph, const IrNode& n,
                                          std::vector<int64_t> src) {
  if (n.inputs.size() < 2 || n.inputs[1] < 0) {
    return EPCTX_ERROR(kInvalidArgument, "DnnlConv node '{}' has no filter", n.name);
  }
  const IrValue& w = graph.values[static_cast<size_t>(n.inputs[1])];  // OIHW, not packed yet
  exec::Attributes attrs = graph.AttributesOf(n);
  EPCTX_ASSIGN_OR_RETURN(exec::kernels::WindowAttrs window, exec::kernels::ParseWindowAttrs(attrs));
  EPCTX_ASSIGN_OR_RETURN(int64_t group, attrs.GetInt("group", 1));
  CompileTimeConv out;
  onednn::ConvConfig& config = out.config;
  EPCTX_ASSIGN_OR_RETURN(int64_t src_layout, attrs.GetInt(ops::kSrcLayout, 0));
  EPCTX_ASSIGN_OR_RETURN(int64_t dst_layout, attrs.GetInt(ops::kDstLayout, 0));
  EPCTX_ASSIGN_OR_RETURN(config.src_layout, onednn::ParseActivationLayout(src_layout));
  EPCTX_ASSIGN_OR_RETURN(config.dst_layout, onednn::ParseActivationLayout(dst_layout));
  EPCTX_ASSIGN_OR_RETURN(int64_t winograd, attrs.GetInt(ops::kWinograd, 0));
  config.winograd = winograd != 0;
  EPCTX_ASSIGN_OR_RETURN(config.post_ops, onednn::ParsePostOps(attrs));
  EPCTX_ASSIGN_OR_RETURN(config.bf16, onednn::ParseComputeBf16(attrs));
  config.has_bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  src = RepresentativeConvInput(std::move(src), w.shape, group, window.dilations);
  EPCTX_ASSIGN_OR_RETURN(out.geometry, onednn::ResolveConvGeometry(window, group, w.shape, src));
  return out;
}

}  // namespace epctx::compile
