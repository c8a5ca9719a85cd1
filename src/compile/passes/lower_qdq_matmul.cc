// A MatMul between two DequantizeLinear nodes (the QDQ format of static quantization: a uint8
// activation and a constant int8 weight) is computed in integers: com.epctx DnnlMatMulInteger on
// the quantized activation and the int8 weight (packed later, as int8, by PackWeights), writing
// float32 scaled by x_scale * w_scale (`output_scales`). The weight stays int8 in the blob instead
// of being folded into float32 by FoldConstants, which is why this runs first. Only where oneDNN's
// int8 kernels multiply the weight exactly (qdq::Int8KernelsExactFor); elsewhere the MatMul stays
// a float matmul of the dequantized values, which is what the QDQ graph means.
#include <optional>

#include "compile/passes/passes.h"
#include "compile/passes/qdq_pattern.h"
#include "exec/kernels/epctx_ops.h"

namespace epctx::compile {
namespace {

struct QdqMatMul {
  qdq::QuantizedActivation x;
  qdq::QuantizedWeight w;  // [K, N]; scale per tensor or per column
};

std::optional<QdqMatMul> MatchQdqMatMul(const IrGraph& g, const std::vector<int>& producer,
                                        const IrNode& mm) {
  if (!mm.domain.empty() || mm.op_type != "MatMul" || mm.inputs.size() != 2 ||
      mm.outputs.size() != 1) {
    return std::nullopt;
  }
  const IrNode* dx = qdq::DequantizeProducing(g.nodes, producer, mm.inputs[0]);
  const IrNode* dw = qdq::DequantizeProducing(g.nodes, producer, mm.inputs[1]);
  if (dx == nullptr || dw == nullptr) return std::nullopt;
  auto x = qdq::MatchActivation(g, *dx);
  auto w = qdq::MatchWeight(g, *dw, 1);
  if (!x || !w) return std::nullopt;
  const IrValue& wq = g.values[static_cast<size_t>(w->q)];
  const IrValue& a = g.values[static_cast<size_t>(mm.inputs[0])];
  if (wq.shape.size() != 2 || !qdq::Int8KernelsExactFor(wq)) return std::nullopt;
  if (a.shape_known &&
      (a.shape.empty() || (a.shape.back() >= 0 && a.shape.back() != wq.shape[0]))) {
    return std::nullopt;
  }
  return QdqMatMul{*x, std::move(*w)};
}

// One DnnlMatMulInteger with output_scales, writing the MatMul's output.
IrNode Rewrite(IrGraph& graph, const IrNode& mm, const QdqMatMul& m) {
  const IrValue& w = graph.values[static_cast<size_t>(m.w.q)];
  const int64_t k = w.shape[0], cols = w.shape[1];
  const int8_t* wp = reinterpret_cast<const int8_t*>(w.constant->bytes.data());
  std::vector<int32_t> colsum(static_cast<size_t>(cols), 0);
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < cols; ++j) colsum[static_cast<size_t>(j)] += wp[i * cols + j];
  }
  const std::string name = w.name + "_colsum";  // before AddConstant may move graph.values
  const int sums = graph.AddConstant(
      name, ConstantData::FromVector<int32_t>(DataType::kInt32, {cols}, std::move(colsum)));
  IrNode out = MakeNode(mm.name, ops::kDnnlMatMulInteger, ops::kDomain,
                        {m.x.q, m.w.q, m.x.zero, sums}, mm.outputs[0]);
  IrAttribute scales;
  scales.name = ops::kOutputScales;
  scales.type = exec::AttrType::kFloats;
  for (float s : m.w.scale) scales.floats.push_back(m.x.scale * s);
  out.attrs.push_back(std::move(scales));
  return out;
}

}  // namespace

Result<PassStats> LowerQdqMatMulsToInteger(IrGraph& graph) {
  PassStats stats{"lower-qdq-matmul-integer", 0};
  // Per-axis DequantizeLinear and the broadcasting Mul this writes need opset 13.
  if (graph.OpsetOf("") < 13) return stats;
  // Every match first (they read the producers), then the rewrites.
  const std::vector<int> producer = Producers(graph);
  std::vector<std::optional<QdqMatMul>> matches(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    matches[i] = MatchQdqMatMul(graph, producer, graph.nodes[i]);
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!matches[i]) continue;
    IrNode rewritten = Rewrite(graph, graph.nodes[i], *matches[i]);
    graph.nodes[i] = std::move(rewritten);
    stats.changed++;
  }
  if (stats.changed > 0) graph.DeclareEpctxOpset();
  return stats;
}

}  // namespace epctx::compile
