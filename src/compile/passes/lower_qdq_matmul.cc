// A MatMul between two DequantizeLinear nodes (the QDQ format of static quantization: a uint8
// activation and a constant int8 weight) is computed in integers: com.epctx DnnlMatMulInteger on
// the quantized activation and the int8 weight (packed later, as int8, by PackWeights), then Cast
// to float and one Mul by x_scale * w_scale. The weight stays int8 in the blob instead of being
// folded into float32 by FoldConstants, which is why this runs first.
#include <cstring>
#include <numeric>
#include <optional>

#include "compile/passes/passes.h"

namespace epctx::compile {
namespace {

const IrValue& ValueAt(const IrGraph& g, int v) {
  return g.values[static_cast<size_t>(v)];
}

int64_t ElementCount(const IrValue& v) {
  return std::accumulate(v.shape.begin(), v.shape.end(), int64_t{1}, std::multiplies<>());
}

bool IsConstantOf(const IrValue& v, DataType type) {
  return v.constant && v.dtype == type;
}

bool AllZero(const IrValue& v) {
  for (std::byte b : v.constant->bytes) {
    if (b != std::byte{0}) return false;
  }
  return true;
}

int64_t AxisOf(const IrNode& dq) {
  const IrAttribute* a = dq.FindAttr("axis");
  return a != nullptr ? a->i : 1;
}

// The DequantizeLinear node producing `value` (among `nodes`, indexed by `producer`), or null.
const IrNode* DequantizeProducing(const std::vector<IrNode>& nodes,
                                  const std::vector<int>& producer, int value) {
  if (value < 0) return nullptr;
  const int p = producer[static_cast<size_t>(value)];
  if (p < 0) return nullptr;
  const IrNode& n = nodes[static_cast<size_t>(p)];
  if (!n.domain.empty() || n.op_type != "DequantizeLinear" || n.inputs.size() < 2) return nullptr;
  return &n;
}

// What the rewrite needs from DQ(x) -> MatMul <- DQ(w), when the pattern holds.
struct QdqMatMul {
  int x_q = -1;                // uint8 activation
  int x_zero = -1;             // its zero point (uint8 scalar constant), or -1
  float x_scale = 0;           // constant
  int w_q = -1;                // int8 [K, N] constant, zero point 0
  std::vector<float> w_scale;  // 1 or N values
};

bool Match(const IrGraph& g, const std::vector<IrNode>& nodes, const std::vector<int>& producer,
           const IrNode& mm, QdqMatMul& out) {
  if (!mm.domain.empty() || mm.op_type != "MatMul" || mm.inputs.size() != 2 ||
      mm.outputs.size() != 1) {
    return false;
  }
  const IrNode* dx = DequantizeProducing(nodes, producer, mm.inputs[0]);
  const IrNode* dw = DequantizeProducing(nodes, producer, mm.inputs[1]);
  if (dx == nullptr || dw == nullptr) return false;
  // The activation: uint8, per-tensor constant scale and zero point.
  const IrValue& xq = ValueAt(g, dx->inputs[0]);
  const IrValue& xs = ValueAt(g, dx->inputs[1]);
  if (xq.dtype != DataType::kUint8 || xq.constant) return false;
  if (!IsConstantOf(xs, DataType::kFloat32) || ElementCount(xs) != 1) return false;
  if (dx->inputs.size() > 2 && dx->inputs[2] >= 0) {
    const IrValue& xz = ValueAt(g, dx->inputs[2]);
    if (!IsConstantOf(xz, DataType::kUint8) || ElementCount(xz) != 1) return false;
    out.x_zero = dx->inputs[2];
  }
  // The weight: a constant int8 matrix, zero point 0, scale per tensor or per column.
  const IrValue& wq = ValueAt(g, dw->inputs[0]);
  const IrValue& ws = ValueAt(g, dw->inputs[1]);
  if (!IsConstantOf(wq, DataType::kInt8) || wq.shape.size() != 2 || wq.shape[0] < 1 ||
      wq.shape[1] < 1 || !IsConstantOf(ws, DataType::kFloat32)) {
    return false;
  }
  const int64_t scales = ElementCount(ws);
  if (scales != 1) {
    const int64_t axis = AxisOf(*dw);
    if (ws.shape.size() != 1 || scales != wq.shape[1] || (axis != 1 && axis != -1)) return false;
  }
  if (dw->inputs.size() > 2 && dw->inputs[2] >= 0) {
    const IrValue& wz = ValueAt(g, dw->inputs[2]);
    if (!IsConstantOf(wz, DataType::kInt8) || !AllZero(wz)) return false;
  }
  const IrValue& a = ValueAt(g, mm.inputs[0]);
  if (a.shape_known &&
      (a.shape.empty() || (a.shape.back() >= 0 && a.shape.back() != wq.shape[0]))) {
    return false;
  }
  out.x_q = dx->inputs[0];
  std::memcpy(&out.x_scale, xs.constant->bytes.data(), sizeof(float));
  out.w_q = dw->inputs[0];
  out.w_scale.resize(static_cast<size_t>(scales));
  std::memcpy(out.w_scale.data(), ws.constant->bytes.data(), out.w_scale.size() * sizeof(float));
  return true;
}

int AddLike(IrGraph& g, const IrValue& like, const std::string& hint, DataType type) {
  IrValue v;
  v.name = g.UniqueName(hint);
  v.dtype = type;
  v.shape_known = like.shape_known;
  v.shape = like.shape;
  v.dim_names = like.dim_names;
  return g.AddValue(std::move(v));
}

IrNode MakeNode(const std::string& name, const std::string& op, const std::string& domain,
                std::vector<int> inputs, int output) {
  IrNode n;
  n.name = name;
  n.op_type = op;
  n.domain = domain;
  n.inputs = std::move(inputs);
  n.outputs = {output};
  return n;
}

}  // namespace

Result<PassStats> LowerQdqMatMulsToInteger(IrGraph& graph) {
  PassStats stats{"lower-qdq-matmul-integer", 0};
  // Per-axis DequantizeLinear and the broadcasting Mul this writes need opset 13.
  if (graph.OpsetOf("") < 13) return stats;
  std::vector<IrNode> nodes;
  std::vector<int> producer(graph.values.size(), -1);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (int o : graph.nodes[i].outputs) {
      if (o >= 0) producer[static_cast<size_t>(o)] = static_cast<int>(i);
    }
  }
  // Every match first (they read the producers), then the rewritten list.
  std::vector<std::optional<QdqMatMul>> matches(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    QdqMatMul m;
    if (Match(graph, graph.nodes, producer, graph.nodes[i], m)) matches[i] = std::move(m);
  }
  std::vector<IrNode> old = std::move(graph.nodes);
  for (size_t i = 0; i < old.size(); ++i) {
    IrNode& mm = old[i];
    if (!matches[i]) {
      nodes.push_back(std::move(mm));
      continue;
    }
    const QdqMatMul& m = *matches[i];
    // Copies: adding values below may move graph.values.
    const IrValue w = ValueAt(graph, m.w_q);
    const IrValue y_value = ValueAt(graph, mm.outputs[0]);
    const int64_t k = w.shape[0], cols = w.shape[1];
    const int8_t* wp = reinterpret_cast<const int8_t*>(w.constant->bytes.data());
    std::vector<int32_t> colsum(static_cast<size_t>(cols), 0);
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < cols; ++j) colsum[static_cast<size_t>(j)] += wp[i * cols + j];
    }
    std::vector<float> scale(m.w_scale.size());
    for (size_t j = 0; j < scale.size(); ++j) scale[j] = m.x_scale * m.w_scale[j];
    const std::vector<int64_t> scale_shape =
        scale.size() == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{cols};
    const int sums = graph.AddConstant(
        w.name + "_colsum",
        ConstantData::FromVector<int32_t>(DataType::kInt32, {cols}, std::move(colsum)));
    const int scales = graph.AddConstant(
        w.name + "_product_scale",
        ConstantData::FromVector<float>(DataType::kFloat32, scale_shape, std::move(scale)));
    const int y = mm.outputs[0];
    const int acc = AddLike(graph, y_value, y_value.name + "_int32", DataType::kInt32);
    const int accf = AddLike(graph, y_value, y_value.name + "_float", DataType::kFloat32);
    nodes.push_back(
        MakeNode(mm.name, "DnnlMatMulInteger", "com.epctx", {m.x_q, m.w_q, m.x_zero, sums}, acc));
    IrNode cast = MakeNode(mm.name + "_to_float", "Cast", "", {acc}, accf);
    IrAttribute to;
    to.name = "to";
    to.type = exec::AttrType::kInt;
    to.i = 1;  // FLOAT
    cast.attrs.push_back(to);
    nodes.push_back(std::move(cast));
    nodes.push_back(MakeNode(mm.name + "_scale", "Mul", "", {accf, scales}, y));
    stats.changed++;
  }
  graph.nodes = std::move(nodes);
  if (stats.changed > 0) graph.opsets["com.epctx"] = 1;
  return stats;
}

}  // namespace epctx::compile
