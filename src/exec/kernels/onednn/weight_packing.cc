#include "exec/kernels/onednn/weight_packing.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <span>

#include "exec/kernels/elementwise/element_types.h"
#include "exec/kernels/onednn/blocked_gemv.h"
#include "exec/kernels/onednn/compute_type.h"
#include "exec/kernels/onednn/isa.h"
#include "exec/kernels/onednn/panel_matmul.h"
#include "exec/kernels/onednn/runtime.h"
#include "exec/kernels/onednn/weight_format.h"
#include "format/target.h"
#include "util/cpu_features.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {
namespace {

// ONNX's filter layout, OIHW (GOIHW with groups), at the problem's spatial rank.
dnnl::memory::format_tag OnnxFilterTag(const ConvGeometry& g) {
  using tag = dnnl::memory::format_tag;
  const size_t spatial = g.kernel.size();
  if (g.group > 1) return spatial == 1 ? tag::goiw : spatial == 3 ? tag::goidhw : tag::goihw;
  return spatial == 1 ? tag::oiw : spatial == 3 ? tag::oidhw : tag::oihw;
}

// kUnsupported when oneDNN's int8 kernels here would saturate on `weights`.
Status CheckInt8ProductsExact(std::span<const int8_t> weights) {
  if (Int8ProductsExact(weights)) return Status::Ok();
  const auto [lo, hi] = std::minmax_element(weights.begin(), weights.end());
  return EPCTX_ERROR(kUnsupported,
                     "int8 weights from {} to {} would saturate in oneDNN's int8 kernels at "
                     "this CPU's tier ({}, no VNNI), which add pairs of products in int16: "
                     "only weights within [-{}, {}] are multiplied exactly",
                     *lo, *hi, format::KernelIsaName(PackingIsa()), kInt8WeightBoundWithoutVnni,
                     kInt8WeightBoundWithoutVnni);
}

// Whether oneDNN's matmul reads the weight as plain [K, N] rows (its AVX2 tiers' gemm:jit).
bool ReadsPlainRows(const MatMulGeometry& g, const dnnl::matmul::primitive_desc& pd) {
  const dnnl::memory::desc chosen = pd.weights_desc();
  const dnnl_memory_desc_t& md = chosen.data;
  return md.ndims == 2 && md.format_kind == dnnl_blocked &&
         md.format_desc.blocking.inner_nblks == 0 && md.format_desc.blocking.strides[0] == g.n &&
         md.format_desc.blocking.strides[1] == 1;
}

// Floats added to each row of a plain [K, N] weight whose rows are a multiple of 1 KiB long.
constexpr int64_t kAliasingRowPad = 16;
constexpr int64_t kAliasingRowBytes = 1024;

// oneDNN's plain-layout matmul (gemm:jit, what AVX2 CPUs get) reads a [K, N] weight a few columns
// at a time down all K rows; when a row is a multiple of 4 KiB, every row of such a panel falls
// into the same cache sets and evicts the others, and at 2 or 1 KiB every other or fourth row
// does. SmolLM's [576, 49152] lm_head over 128 rows ran at 13 GFLOPS against 24 with each row 16
// floats longer (one thread, Zen 1); over 128 rows on one Zen 3 thread, oneDNN alone: [2048, 512]
// 5.0-5.4 -> 3.1-3.3 ms, SmolLM's [576, 1536] 4.5-5.5 -> 2.9-3.0, [512, 1536] 3.3-3.5 -> 2.4-2.5,
// BERT's [768, 768] 2.04 -> 1.80 and [3072, 768] 8.25 -> 7.67 (means of 4 alternating runs);
// rows of 2.25 KiB (SmolLM's 576 columns) gained nothing. A one-row product is the same either
// way. Such a weight is stored with the longer rows (the gap zeroed), when the primitive
// takes them; the others as oneDNN chose. (Float32 weights are stored so only when the 1x1
// convolution cannot take them in panels: panel_matmul.h.)
dnnl::matmul::primitive_desc PadAliasingRows(const MatMulGeometry& g, const MatMulConfig& c,
                                             dnnl::matmul::primitive_desc pd) {
  if (!ReadsPlainRows(g, pd) || c.integer || c.bf16 || g.k < 2 || AliasFreeRowStride(g.n) == g.n)
    return pd;
  const dnnl::memory::desc padded({g.k, g.n}, dnnl::memory::data_type::f32,
                                  dnnl::memory::dims{AliasFreeRowStride(g.n), 1});
  auto with_padding = MakeMatMulPrimitiveDesc(g, c, &padded);
  return with_padding.ok() ? *with_padding : pd;
}

}  // namespace

int64_t AliasFreeRowStride(int64_t n) {
  return (n * 4) % kAliasingRowBytes == 0 ? n + kAliasingRowPad : n;
}

namespace {

template <typename PrimitiveDesc>
Result<PackedWeightPlan> PlanOf(const PrimitiveDesc& pd, bool integer, bool bf16) {
  PackedWeightPlan plan;
  const dnnl::memory::desc packed = pd.weights_desc();
  EPCTX_ASSIGN_OR_RETURN(plan.format, EncodeWeightFormat(packed));
  plan.implementation = std::string("onednn:") + pd.impl_info_str();
  plan.dtype = integer ? DataType::kInt8 : PackedFloatWeightType(bf16);
  plan.elements = static_cast<int64_t>(packed.get_size() / DataTypeSize(plan.dtype));
  if (bf16) plan.required_cpu_features = Bf16WeightCpuFeatures();
  return plan;
}

// `data` (of layout `source`) reordered into `packed`, as a Tensor of `type`. Gaps a layout leaves
// between elements are zero: heap garbage must not reach the blob (its bytes are hashed,
// deduplicated and compared).
Result<Tensor> ReorderInto(const dnnl::memory::desc& packed, DataType type,
                           const dnnl::memory::desc& source, const void* data,
                           std::string_view what) {
  EPCTX_ASSIGN_OR_RETURN(
      Tensor bytes,
      Tensor::Allocate(type, {static_cast<int64_t>(packed.get_size() / DataTypeSize(type))}));
  std::memset(bytes.mutable_data(), 0, packed.get_size());
  try {
    dnnl::memory src = Wrap(source, data);
    dnnl::memory dst = Wrap(packed, bytes.data());
    dnnl::reorder(src, dst).execute(ThreadStream(), src, dst);
  } catch (const dnnl::error& e) {
    return FromDnnlError(e, fmt::format("packing {} weights", what));
  }
  return bytes;
}

// `data` reordered into the primitive's packed layout, as PackedWeight's bytes of `type`.
template <typename PrimitiveDesc>
Result<PackedWeight> PackInto(const PrimitiveDesc& pd, DataType type,
                              uint64_t required_cpu_features, const dnnl::memory::desc& source,
                              const void* data, std::string_view what) {
  PackedWeight out;
  const dnnl::memory::desc packed = pd.weights_desc();
  EPCTX_ASSIGN_OR_RETURN(out.format, EncodeWeightFormat(packed));
  out.implementation = std::string("onednn:") + pd.impl_info_str();
  out.required_cpu_features = required_cpu_features;
  EPCTX_ASSIGN_OR_RETURN(out.bytes, ReorderInto(packed, type, source, data, what));
  return out;
}

// A float problem's weights: float32, or bfloat16 with c.bf16.
template <typename PrimitiveDesc>
Result<PackedWeight> PackFloatWeights(const PrimitiveDesc& pd, bool bf16,
                                      const dnnl::memory::desc& source, const float* data,
                                      std::string_view what) {
  return PackInto(pd, PackedFloatWeightType(bf16), bf16 ? Bf16WeightCpuFeatures() : 0, source, data,
                  what);
}

// oneDNN's first implementation of the problem, or with `format` the one that reads it.
Result<dnnl::convolution_forward::primitive_desc> ConvPrimitiveDescFor(
    const ConvGeometry& g, const ConvConfig& c, std::span<const int64_t> format) {
  if (format.empty()) return MakeConvPrimitiveDesc(g, c, nullptr);
  EPCTX_ASSIGN_OR_RETURN(auto found, ConvPrimitiveDescReading(g, c, format));
  if (!found.has_value()) {
    return EPCTX_ERROR(kInternal, "no oneDNN implementation of the convolution reads {}",
                       DescribeWeightFormat(format));
  }
  return std::move(*found);
}

// A weight oneDNN's matmul would read in plain rows, stored in panels for the 1x1 convolution
// instead (panel_matmul.h).
Result<PackedWeightPlan> PanelPlan(const MatMulGeometry& g, const MatMulConfig& c) {
  EPCTX_ASSIGN_OR_RETURN(auto pd, MakePanelMatMulPrimitiveDesc(g, c, true));
  PackedWeightPlan plan;
  const dnnl::memory::desc panels = PanelWeightDesc(g.k, g.n);
  EPCTX_ASSIGN_OR_RETURN(plan.format, EncodeWeightFormat(panels));
  plan.implementation = std::string("onednn:") + pd.impl_info_str();
  plan.dtype = DataType::kFloat32;
  plan.elements = static_cast<int64_t>(panels.get_size() / sizeof(float));
  return plan;
}

}  // namespace

Result<PackedWeightPlan> PlanConvWeights(const ConvGeometry& g, const ConvConfig& c,
                                         std::span<const int64_t> format) {
  EPCTX_ASSIGN_OR_RETURN(auto pd, ConvPrimitiveDescFor(g, c, format));
  return PlanOf(pd, c.integer, c.bf16);
}

Result<PackedWeightPlan> PlanMatMulWeights(const MatMulGeometry& g, const MatMulConfig& c) {
  EPCTX_ASSIGN_OR_RETURN(auto chosen, MakeMatMulPrimitiveDesc(g, c, nullptr));
  if (TakesPanelMatMul(g, c, ReadsPlainRows(g, chosen))) return PanelPlan(g, c);
  return PlanOf(PadAliasingRows(g, c, std::move(chosen)), c.integer, c.bf16);
}

Result<PackedWeight> PackConvWeights(const ConvGeometry& g, const ConvConfig& c, const float* oihw,
                                     std::span<const int64_t> format) {
  EPCTX_ASSIGN_OR_RETURN(auto pd, ConvPrimitiveDescFor(g, c, format));
  return PackFloatWeights(pd, c.bf16, PlainDesc(g.dnnl_weight_dims(), OnnxFilterTag(g)), oihw,
                          "convolution");
}

Result<PackedWeight> PackMatMulWeights(const MatMulGeometry& g, const MatMulConfig& c,
                                       const float* b, bool transposed, float alpha) {
  EPCTX_ASSIGN_OR_RETURN(auto chosen, MakeMatMulPrimitiveDesc(g, c, nullptr));
  const bool panels = TakesPanelMatMul(g, c, ReadsPlainRows(g, chosen));
  std::vector<float> scaled;
  if (alpha != 1.0f) {
    scaled.assign(b, b + g.k * g.n);
    for (float& v : scaled) v *= alpha;
    b = scaled.data();
  }
  using tag = dnnl::memory::format_tag;
  // [N, K] row-major is [K, N] with swapped strides: oneDNN's "ba".
  const dnnl::memory::desc source = PlainDesc({g.k, g.n}, transposed ? tag::ba : tag::ab);
  if (panels) {
    EPCTX_ASSIGN_OR_RETURN(PackedWeightPlan plan, PanelPlan(g, c));
    PackedWeight out;
    EPCTX_ASSIGN_OR_RETURN(
        out.bytes, ReorderInto(PanelWeightDesc(g.k, g.n), DataType::kFloat32, source, b, "matmul"));
    out.format = std::move(plan.format);
    out.implementation = std::move(plan.implementation);
    return out;
  }
  return PackFloatWeights(PadAliasingRows(g, c, std::move(chosen)), c.bf16, source, b, "matmul");
}

Result<PackedWeight> PackIntegerConvWeights(const ConvGeometry& g, const ConvConfig& c,
                                            const int8_t* oihw) {
  if (!c.integer) return EPCTX_ERROR(kInvalidArgument, "not an integer convolution");
  int64_t count = 1;
  for (int64_t d : g.onnx_weight_dims()) count *= d;
  const std::span<const int8_t> weights(oihw, static_cast<size_t>(count));
  EPCTX_RETURN_IF_ERROR(CheckInt8ProductsExact(weights));
  EPCTX_ASSIGN_OR_RETURN(auto pd, MakeConvPrimitiveDesc(g, c, nullptr));
  const dnnl::memory::desc source(g.dnnl_weight_dims(), dnnl::memory::data_type::s8,
                                  OnnxFilterTag(g));
  return PackInto(pd, DataType::kInt8, Int8WeightCpuFeatures(weights), source, oihw,
                  "integer convolution");
}

Result<PackedWeight> PackIntegerMatMulWeights(const MatMulGeometry& g, const MatMulConfig& c,
                                              const int8_t* b) {
  if (!c.integer) return EPCTX_ERROR(kInvalidArgument, "not an integer matmul");
  const std::span<const int8_t> weights(b, static_cast<size_t>(g.k * g.n));
  EPCTX_RETURN_IF_ERROR(CheckInt8ProductsExact(weights));
  EPCTX_ASSIGN_OR_RETURN(auto pd, MakeMatMulPrimitiveDesc(g, c, nullptr));
  const dnnl::memory::desc source({g.k, g.n}, dnnl::memory::data_type::s8,
                                  dnnl::memory::format_tag::ab);
  return PackInto(pd, DataType::kInt8, Int8WeightCpuFeatures(weights), source, b, "integer matmul");
}

namespace {

// The element type slot of an encoded format (weight_format.h: version, kind, type, ...).
constexpr size_t kFormatTypeSlot = 2;

// What our float16 kernels need of a CPU of the tier the weights are packed for: on AVX-512,
// vcvtph2ps on 512 bits (AVX-512F's); on AVX2, the 256-bit F16C conversion and FMA.
uint64_t Float16WeightCpuFeatures() {
  return PackingIsa() == format::KernelIsa::kAvx512Core ? cpu::kAvx512F | cpu::kF16c
                                                        : cpu::kAvx2 | cpu::kFma | cpu::kF16c;
}

// The float16 form's layout, oneDNN's "BA16a64b" (blocks of 64 columns, each [K padded to 16]
// [64]): what oneDNN packs float32 matmul weights in on AVX-512, and the layout our float16
// kernels read on every CPU.
dnnl::memory::desc BlockedDesc(int64_t k, int64_t n, dnnl::memory::data_type type) {
  return dnnl::memory::desc({k, n}, type, dnnl::memory::format_tag::BA16a64b);
}

}  // namespace

Result<PackedWeightPlan> Float16FormOf(const PackedWeightPlan& plan, int64_t k, int64_t n) {
  if (plan.dtype != DataType::kFloat32) {
    return EPCTX_ERROR(kUnsupported, "the weight's layout {} has no float16 form read here",
                       DescribeWeightFormat(plan.format));
  }
  PackedWeightPlan half = plan;
  if (GemvLayoutOf(plan.format, k, n) != GemvLayout::kFloat32Blocked) {
    // oneDNN keeps this weight plain (its AVX2 matmuls read [K, N] rows): the float16 form takes
    // the blocked layout all the same, read only by our kernels.
    try {
      EPCTX_ASSIGN_OR_RETURN(half.format,
                             EncodeWeightFormat(BlockedDesc(k, n, dnnl::memory::data_type::f32)));
    } catch (const dnnl::error& e) {
      return FromDnnlError(e, "planning a float16 weight");
    }
    half.required_cpu_features = 0;
  }
  half.format[kFormatTypeSlot] = dnnl_f16;
  half.dtype = DataType::kFloat16;
  half.elements = GemvWeightBytes(GemvLayout::kFloat16Blocked, k, n) / 2;
  half.implementation = "epctx:float16-weights";
  half.required_cpu_features |= Float16WeightCpuFeatures();
  if (GemvLayoutOf(half.format, k, n) != GemvLayout::kFloat16Blocked) {
    return EPCTX_ERROR(kUnsupported, "this build reads no float16 weights");
  }
  return half;
}

Result<PackedWeight> PackFloat16MatMulWeights(const PackedWeightPlan& half, int64_t k, int64_t n,
                                              const float* b) {
  if (half.dtype != DataType::kFloat16 || half.format.size() <= kFormatTypeSlot ||
      GemvLayoutOf(half.format, k, n) != GemvLayout::kFloat16Blocked) {
    return EPCTX_ERROR(kInternal, "not a float16 weight plan (Float16FormOf makes them)");
  }
  std::vector<int64_t> wide_format = half.format;
  wide_format[kFormatTypeSlot] = dnnl_f32;
  EPCTX_ASSIGN_OR_RETURN(dnnl::memory::desc wide, DecodeBlockedWeightFormat(wide_format));
  PackedWeight out;
  EPCTX_ASSIGN_OR_RETURN(
      out.bytes, ReorderInto(wide, DataType::kFloat32,
                             PlainDesc({k, n}, dnnl::memory::format_tag::ab), b, "float16 matmul"));
  out.format = std::move(wide_format);
  out.implementation = half.implementation;
  out.required_cpu_features = half.required_cpu_features;
  return NarrowToFloat16(std::move(out));
}

Result<PackedWeight> NarrowToFloat16(PackedWeight packed) {
  if (packed.bytes.dtype() != DataType::kFloat32 || packed.format.size() <= kFormatTypeSlot) {
    return EPCTX_ERROR(kInternal, "only packed float32 weights narrow to float16");
  }
  const int64_t count = packed.bytes.element_count();
  EPCTX_ASSIGN_OR_RETURN(Tensor half, Tensor::Allocate(DataType::kFloat16, {count}));
  const float* from = packed.bytes.data_as<float>();
  uint16_t* to = static_cast<uint16_t*>(half.mutable_data());
  for (int64_t i = 0; i < count; ++i) {
    const elementwise::Half h = elementwise::FloatToHalf(from[i]);
    if (std::bit_cast<uint32_t>(elementwise::HalfToFloat(h)) != std::bit_cast<uint32_t>(from[i])) {
      return EPCTX_ERROR(kInternal, "packed weight element {} ({}) is not a float16 value", i,
                         from[i]);
    }
    to[i] = h.bits;
  }
  packed.bytes = std::move(half);
  packed.format[kFormatTypeSlot] = dnnl_f16;
  packed.implementation = "epctx:float16-weights";
  packed.required_cpu_features |= Float16WeightCpuFeatures();
  return packed;
}

}  // namespace epctx::exec::kernels::onednn
