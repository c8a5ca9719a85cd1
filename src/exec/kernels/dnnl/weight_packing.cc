#include "exec/kernels/dnnl/weight_packing.h"

#include <algorithm>
#include <span>

#include "exec/kernels/dnnl/isa.h"
#include "exec/kernels/dnnl/runtime.h"
#include "exec/kernels/dnnl/weight_format.h"
#include "format/target.h"
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

}  // namespace

Result<PackedWeight> PackConvWeights(const ConvGeometry& g, const ConvConfig& c,
                                     const float* oihw) {
  EPCTX_ASSIGN_OR_RETURN(auto pd, MakeConvPrimitiveDesc(g, c, nullptr));
  PackedWeight out;
  const dnnl::memory::desc packed = pd.weights_desc();
  EPCTX_ASSIGN_OR_RETURN(out.format, EncodeWeightFormat(packed));
  out.implementation = std::string("onednn:") + pd.impl_info_str();
  const size_t bytes = packed.get_size();
  EPCTX_ASSIGN_OR_RETURN(
      out.bytes,
      Tensor::Allocate(DataType::kFloat32, {static_cast<int64_t>(bytes / sizeof(float))}));
  try {
    dnnl::memory src = Wrap(PlainDesc(g.dnnl_weight_dims(), OnnxFilterTag(g)), oihw);
    dnnl::memory dst = Wrap(packed, out.bytes.data());
    dnnl::reorder(src, dst).execute(ThreadStream(), src, dst);
  } catch (const dnnl::error& e) {
    return FromDnnlError(e, "packing convolution weights");
  }
  return out;
}

Result<PackedWeight> PackMatMulWeights(const MatMulGeometry& g, const MatMulConfig& c,
                                       const float* b, bool transposed, float alpha) {
  EPCTX_ASSIGN_OR_RETURN(auto pd, MakeMatMulPrimitiveDesc(g, c, nullptr));
  PackedWeight out;
  const dnnl::memory::desc packed = pd.weights_desc();
  EPCTX_ASSIGN_OR_RETURN(out.format, EncodeWeightFormat(packed));
  out.implementation = std::string("onednn:") + pd.impl_info_str();
  EPCTX_ASSIGN_OR_RETURN(
      out.bytes, Tensor::Allocate(DataType::kFloat32,
                                  {static_cast<int64_t>(packed.get_size() / sizeof(float))}));
  std::vector<float> scaled;
  if (alpha != 1.0f) {
    scaled.assign(b, b + g.k * g.n);
    for (float& v : scaled) v *= alpha;
    b = scaled.data();
  }
  try {
    using tag = dnnl::memory::format_tag;
    // [N, K] row-major is [K, N] with swapped strides: oneDNN's "ba".
    dnnl::memory src = Wrap(PlainDesc({g.k, g.n}, transposed ? tag::ba : tag::ab), b);
    dnnl::memory dst = Wrap(packed, out.bytes.data());
    dnnl::reorder(src, dst).execute(ThreadStream(), src, dst);
  } catch (const dnnl::error& e) {
    return FromDnnlError(e, "packing matmul weights");
  }
  return out;
}

Result<PackedWeight> PackIntegerConvWeights(const ConvGeometry& g, const ConvConfig& c,
                                            const int8_t* oihw) {
  if (!c.integer) return EPCTX_ERROR(kInvalidArgument, "not an integer convolution");
  int64_t count = 1;
  for (int64_t d : g.onnx_weight_dims()) count *= d;
  const std::span<const int8_t> weights(oihw, static_cast<size_t>(count));
  EPCTX_RETURN_IF_ERROR(CheckInt8ProductsExact(weights));
  EPCTX_ASSIGN_OR_RETURN(auto pd, MakeConvPrimitiveDesc(g, c, nullptr));
  PackedWeight out;
  out.required_cpu_features = Int8WeightCpuFeatures(weights);
  const dnnl::memory::desc packed = pd.weights_desc();
  EPCTX_ASSIGN_OR_RETURN(out.format, EncodeWeightFormat(packed));
  out.implementation = std::string("onednn:") + pd.impl_info_str();
  EPCTX_ASSIGN_OR_RETURN(
      out.bytes, Tensor::Allocate(DataType::kInt8, {static_cast<int64_t>(packed.get_size())}));
  try {
    using dnnl::memory;
    dnnl::memory src =
        Wrap(memory::desc(g.dnnl_weight_dims(), memory::data_type::s8, OnnxFilterTag(g)), oihw);
    dnnl::memory dst = Wrap(packed, out.bytes.data());
    dnnl::reorder(src, dst).execute(ThreadStream(), src, dst);
  } catch (const dnnl::error& e) {
    return FromDnnlError(e, "packing integer convolution weights");
  }
  return out;
}

Result<PackedWeight> PackIntegerMatMulWeights(const MatMulGeometry& g, const MatMulConfig& c,
                                              const int8_t* b) {
  if (!c.integer) return EPCTX_ERROR(kInvalidArgument, "not an integer matmul");
  const std::span<const int8_t> weights(b, static_cast<size_t>(g.k * g.n));
  EPCTX_RETURN_IF_ERROR(CheckInt8ProductsExact(weights));
  EPCTX_ASSIGN_OR_RETURN(auto pd, MakeMatMulPrimitiveDesc(g, c, nullptr));
  PackedWeight out;
  out.required_cpu_features = Int8WeightCpuFeatures(weights);
  const dnnl::memory::desc packed = pd.weights_desc();
  EPCTX_ASSIGN_OR_RETURN(out.format, EncodeWeightFormat(packed));
  out.implementation = std::string("onednn:") + pd.impl_info_str();
  EPCTX_ASSIGN_OR_RETURN(
      out.bytes, Tensor::Allocate(DataType::kInt8, {static_cast<int64_t>(packed.get_size())}));
  try {
    using dnnl::memory;
    dnnl::memory src =
        Wrap(memory::desc({g.k, g.n}, memory::data_type::s8, memory::format_tag::ab), b);
    dnnl::memory dst = Wrap(packed, out.bytes.data());
    dnnl::reorder(src, dst).execute(ThreadStream(), src, dst);
  } catch (const dnnl::error& e) {
    return FromDnnlError(e, "packing integer matmul weights");
  }
  return out;
}

}  // namespace epctx::exec::kernels::onednn
