// A 2-D Conv between DequantizeLinear nodes (the QDQ format of static quantization: a uint8
// activation, a constant int8 filter, an int32 or float bias) becomes com.epctx DnnlIntegerConv:
// oneDNN's int8 convolution on the filter packed as int8 (PackWeights), writing float32 scaled
// per output channel by x_scale * w_scale. The activation's zero point is folded into the bias:
// the kernel pads its input with the zero point, so conv(x - z, w) = conv(x, w) - z * sum(w[m])
// at every output position. Runs before FoldConstants, which would fold the filter to float32.
// Only where oneDNN's int8 kernels multiply the filter exactly (qdq::Int8KernelsExactFor);
// elsewhere the Conv stays a float convolution of the dequantized values.
#include <cstring>
#include <optional>

#include "compile/passes/dnnl_lowering.h"
#include "compile/passes/passes.h"
#include "compile/passes/qdq_pattern.h"
#include "exec/kernels/epctx_ops.h"

namespace epctx::compile {
namespace {

struct QdqConv {
  qdq::QuantizedActivation x;
  qdq::QuantizedWeight w;   // [M, C/group, kH, kW]; scale per tensor or per output channel
  std::vector<float> bias;  // float32 [M] (zeros when absent)
};

const IrValue& ValueAt(const IrGraph& g, int v) {
  return g.values[static_cast<size_t>(v)];
}

// The bias as float32 [M]: a float32 constant, or DequantizeLinear of an int32 constant with
// zero point 0.
std::optional<std::vector<float>> MatchBias(const IrGraph& g, const std::vector<int>& producer,
                                            int value, int64_t channels) {
  std::vector<float> out(static_cast<size_t>(channels), 0.0f);
  if (value < 0) return out;
  const IrValue& b = ValueAt(g, value);
  if (b.constant && b.dtype == DataType::kFloat32) {
    if (b.constant->bytes.size() != out.size() * sizeof(float)) return std::nullopt;
    std::memcpy(out.data(), b.constant->bytes.data(), b.constant->bytes.size());
    return out;
  }
  const IrNode* dq = qdq::DequantizeProducing(g.nodes, producer, value);
  if (dq == nullptr) return std::nullopt;
  const IrValue& q = ValueAt(g, dq->inputs[0]);
  const IrValue& s = ValueAt(g, dq->inputs[1]);
  if (!q.constant || q.dtype != DataType::kInt32 ||
      q.constant->bytes.size() != out.size() * sizeof(int32_t) || !s.constant ||
      s.dtype != DataType::kFloat32) {
    return std::nullopt;
  }
  const size_t scales = s.constant->bytes.size() / sizeof(float);
  if (scales != 1 && scales != out.size()) return std::nullopt;
  if (dq->inputs.size() > 2 && dq->inputs[2] >= 0) {
    const IrValue& z = ValueAt(g, dq->inputs[2]);
    if (!z.constant) return std::nullopt;
    for (std::byte byte : z.constant->bytes) {
      if (byte != std::byte{0}) return std::nullopt;
    }
  }
  const int32_t* qp = reinterpret_cast<const int32_t*>(q.constant->bytes.data());
  const float* sp = reinterpret_cast<const float*>(s.constant->bytes.data());
  for (size_t m = 0; m < out.size(); ++m) {
    out[m] = static_cast<float>(qp[m]) * sp[scales == 1 ? 0 : m];
  }
  return out;
}

std::optional<QdqConv> MatchQdqConv(const IrGraph& g, const std::vector<int>& producer,
                                    const IrNode& conv) {
  if (!conv.domain.empty() || conv.op_type != "Conv" || conv.inputs.size() < 2 ||
      conv.inputs.size() > 3 || conv.outputs.size() != 1) {
    return std::nullopt;
  }
  if (const IrAttribute* pad = conv.FindAttr("auto_pad");
      pad != nullptr && pad->s != "NOTSET" && pad->s != "VALID") {
    return std::nullopt;
  }
  const IrNode* dx = qdq::DequantizeProducing(g.nodes, producer, conv.inputs[0]);
  const IrNode* dw = qdq::DequantizeProducing(g.nodes, producer, conv.inputs[1]);
  if (dx == nullptr || dw == nullptr) return std::nullopt;
  auto x = qdq::MatchActivation(g, *dx);
  auto w = qdq::MatchWeight(g, *dw, 0);
  if (!x || !w) return std::nullopt;
  const IrValue& wq = ValueAt(g, w->q);
  const IrValue& xv = ValueAt(g, conv.inputs[0]);
  if (wq.shape.size() != 4 || (xv.shape_known && xv.shape.size() != 4) || TooWideForDnnlConv(xv)) {
    return std::nullopt;
  }
  if (!qdq::Int8KernelsExactFor(wq)) return std::nullopt;
  auto bias = MatchBias(g, producer, conv.inputs.size() > 2 ? conv.inputs[2] : -1, wq.shape[0]);
  if (!bias) return std::nullopt;
  return QdqConv{*x, std::move(*w), std::move(*bias)};
}

IrNode Rewrite(IrGraph& graph, const IrNode& conv, const QdqConv& c) {
  const IrValue& w = ValueAt(graph, c.w.q);
  const int64_t m = w.shape[0];
  const int64_t per_channel = w.shape[1] * w.shape[2] * w.shape[3];
  const int8_t* wp = reinterpret_cast<const int8_t*>(w.constant->bytes.data());
  std::vector<float> scales(c.w.scale.size());
  for (size_t i = 0; i < scales.size(); ++i) scales[i] = c.x.scale * c.w.scale[i];
  std::vector<float> bias(static_cast<size_t>(m));
  for (int64_t o = 0; o < m; ++o) {
    int64_t sum = 0;
    for (int64_t i = 0; i < per_channel; ++i) sum += wp[o * per_channel + i];
    const float scale = scales[scales.size() == 1 ? 0 : static_cast<size_t>(o)];
    bias[static_cast<size_t>(o)] = c.bias[static_cast<size_t>(o)] / scale -
                                   static_cast<float>(c.x.zero_value) * static_cast<float>(sum);
  }
  const std::string name = w.name + "_integer_bias";
  const int b = graph.AddConstant(
      name, ConstantData::FromVector<float>(DataType::kFloat32, {m}, std::move(bias)));
  IrNode out =
      MakeNode(conv.name, ops::kDnnlIntegerConv, ops::kDomain, {c.x.q, c.w.q, b}, conv.outputs[0]);
  for (const IrAttribute& a : conv.attrs) {
    if (a.name != "auto_pad") out.attrs.push_back(a);
  }
  IrAttribute zero;
  zero.name = "x_zero_point";
  zero.type = exec::AttrType::kInt;
  zero.i = c.x.zero_value;
  out.attrs.push_back(zero);
  IrAttribute output_scales;
  output_scales.name = ops::kOutputScales;
  output_scales.type = exec::AttrType::kFloats;
  output_scales.floats = std::move(scales);
  out.attrs.push_back(std::move(output_scales));
  return out;
}

}  // namespace

Result<PassStats> LowerQdqConvsToInteger(IrGraph& graph) {
  PassStats stats{"lower-qdq-conv-integer", 0};
  if (graph.OpsetOf("") < 13) return stats;  // per-axis DequantizeLinear
  const std::vector<int> producer = Producers(graph);
  std::vector<std::optional<QdqConv>> matches(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    matches[i] = MatchQdqConv(graph, producer, graph.nodes[i]);
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
