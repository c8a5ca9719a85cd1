// ONNX Runtime's com.microsoft MatMulNBits (weight-only int4/int8) becomes com.epctx
// MatMulNBitsPacked: its codes are repacked into the layout the kernel reads (nbits_layout.h),
// its zero points unpacked to one byte (or float) per block, and the result stored in the blob
// like every other packed weight. A node the kernel cannot take stays as it is, and its kernel
// says why when a session (or the compile-time check) creates it.
#include "compile/packing/layouts.h"
#include "compile/passes/passes.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/quant/nbits_layout.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

using exec::kernels::NBitsGeometry;
using exec::kernels::NBitsPlan;

std::span<const uint8_t> BytesOf(const IrValue& v) {
  return {reinterpret_cast<const uint8_t*>(v.constant->bytes.data()), v.constant->bytes.size()};
}

Result<int> PackedZeroPoints(IrGraph& graph, const IrValue& zp, const NBitsPlan& plan) {
  const NBitsGeometry& g = plan.g;
  const std::vector<int64_t> shape = {g.n, g.blocks};
  if (plan.float_zero_points) {
    // 8-bit codes are stored as code - 128: their zero points move with them.
    std::vector<float> values(static_cast<size_t>(g.block_count()));
    const float* src = reinterpret_cast<const float*>(zp.constant->bytes.data());
    for (size_t i = 0; i < values.size(); ++i) values[i] = src[i] - (g.bits == 8 ? 128.f : 0.f);
    return graph.AddConstant(zp.name + "_packed",
                             ConstantData::FromVector<float>(DataType::kFloat32, shape, values));
  }
  EPCTX_ASSIGN_OR_RETURN(std::vector<int8_t> values,
                         exec::kernels::UnpackNBitsZeroPoints(g, BytesOf(zp)));
  return graph.AddConstant(zp.name + "_packed",
                           ConstantData::FromVector<int8_t>(DataType::kInt8, shape, values));
}

}  // namespace

Result<PassStats> LowerMatMulNBits(IrGraph& graph) {
  PassStats stats{"lower-matmul-nbits", 0};
  for (IrNode& n : graph.nodes) {
    if (n.domain != "com.microsoft" || n.op_type != "MatMulNBits") continue;
    exec::Attributes attrs = graph.AttributesOf(n);
    std::vector<Tensor> views;
    const exec::NodeInfo info = graph.NodeInfoOf(n, attrs, views);
    Result<NBitsPlan> plan = exec::kernels::PlanMatMulNBits(info);
    if (!plan.ok()) {
      Logger().warn("MatMulNBits node '{}' is not packed: {}", n.name, plan.status().message());
      continue;
    }
    const NBitsGeometry& g = plan->g;
    const IrValue& b = ValueOf(graph, n.inputs[1]);
    // Packed when the blob is written (a deferred constant), one weight at a time.
    const std::vector<int64_t> codes_shape = {g.n, g.blocks, g.block_bytes};
    std::shared_ptr<const ConstantData> source = b.constant;
    auto pack = [g, source, codes_shape]() -> Result<Tensor> {
      EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const ConstantData> from, Materialize(source));
      auto codes = std::make_shared<std::vector<uint8_t>>(exec::kernels::PackNBitsCodes(
          g, {reinterpret_cast<const uint8_t*>(from->bytes.data()), from->bytes.size()}));
      from->ReleasePages();
      return Tensor::View(DataType::kUint8, codes_shape, codes->data(), codes);
    };
    const int codes_index = graph.AddConstant(
        b.name + "_packed",
        ConstantData::Deferred(DataType::kUint8, codes_shape,
                               static_cast<uint32_t>(PackLayout::kNBitsCodes), std::move(pack)));
    int zero_points = -1;
    if (plan->has_zero_points) {
      EPCTX_ASSIGN_OR_RETURN(zero_points,
                             PackedZeroPoints(graph, ValueOf(graph, n.inputs[3]), *plan));
    }
    const int bias = plan->has_bias ? n.inputs[5] : -1;
    n.inputs = {n.inputs[0], codes_index, n.inputs[2], zero_points, bias};
    n.op_type = ops::kMatMulNBitsPacked;
    n.domain = ops::kDomain;
    // Only the attributes the packed kernel reads stay (bits defaults to 4 in ORT's schema).
    n.SetInt(exec::kernels::nbits_attr::kBits, g.bits);
    n.SetInt(exec::kernels::nbits_attr::kAccuracyLevel, plan->accuracy_level);
    stats.changed++;
  }
  if (stats.changed > 0) graph.DeclareEpctxOpset();
  return stats;
}

}  // namespace epctx::compile
