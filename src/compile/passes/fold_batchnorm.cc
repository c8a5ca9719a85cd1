#include <cmath>

#include "compile/passes/passes.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

const ConstantData* FloatConstant(const IrGraph& g, int index, size_t expected_count) {
  if (index < 0) return nullptr;
  const IrValue& v = g.values[static_cast<size_t>(index)];
  if (!v.constant || v.constant->dtype != DataType::kFloat32) return nullptr;
  if (v.constant->bytes.size() != expected_count * sizeof(float)) return nullptr;
  return v.constant.get();
}

std::span<const float> Floats(const ConstantData& c) {
  return {reinterpret_cast<const float*>(c.bytes.data()), c.bytes.size() / sizeof(float)};
}

}  // namespace

// Conv(x, W, b) -> BN(scale, beta, mean, var, eps) equals Conv(x, W', b') with
//   s = scale / sqrt(var + eps),  W'[m] = W[m] * s[m],  b' = (b - mean) * s + beta.
Result<PassStats> FoldBatchNormIntoConv(IrGraph& graph) {
  PassStats stats{"fold-batchnorm", 0};
  std::vector<int> uses = CountUses(graph);
  std::vector<int> producer(graph.values.size(), -1);
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    for (int o : graph.nodes[k].outputs) {
      if (o >= 0) producer[static_cast<size_t>(o)] = static_cast<int>(k);
    }
  }
  std::vector<bool> dead(graph.nodes.size(), false);
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    IrNode& bn = graph.nodes[k];
    if (!bn.domain.empty() || bn.op_type != "BatchNormalization" || bn.inputs.size() != 5) continue;
    if (bn.outputs.size() > 1) {
      bool extra = false;
      for (size_t o = 1; o < bn.outputs.size(); ++o) extra |= bn.outputs[o] >= 0;
      if (extra) continue;
    }
    if (const IrAttribute* t = bn.FindAttr("training_mode"); t && t->i != 0) continue;
    // Before opset 7 the op trains unless is_test=1; spatial=0 (up to opset 8) normalizes per
    // activation, not per channel. Neither is a per-channel affine map to fold.
    if (graph.OpsetOf("") < 7) {
      const IrAttribute* is_test = bn.FindAttr("is_test");
      if (is_test == nullptr || is_test->i == 0) continue;
    }
    if (const IrAttribute* s = bn.FindAttr("spatial"); s && s->i == 0) continue;
    int x = bn.inputs[0];
    if (x < 0 || producer[static_cast<size_t>(x)] < 0 || uses[static_cast<size_t>(x)] != 1 ||
        IsGraphOutput(graph, x)) {
      continue;
    }
    IrNode& conv = graph.nodes[static_cast<size_t>(producer[static_cast<size_t>(x)])];
    if (!conv.domain.empty() || conv.op_type != "Conv" || conv.inputs.size() < 2) continue;
    const IrValue& w = graph.values[static_cast<size_t>(conv.inputs[1])];
    if (!w.constant || w.constant->dtype != DataType::kFloat32 || w.shape.empty()) continue;
    size_t m = static_cast<size_t>(w.shape[0]);
    size_t per_filter = w.constant->bytes.size() / sizeof(float) / std::max<size_t>(m, 1);
    const ConstantData* scale = FloatConstant(graph, bn.inputs[1], m);
    const ConstantData* beta = FloatConstant(graph, bn.inputs[2], m);
    const ConstantData* mean = FloatConstant(graph, bn.inputs[3], m);
    const ConstantData* var = FloatConstant(graph, bn.inputs[4], m);
    const ConstantData* bias =
        conv.inputs.size() > 2 ? FloatConstant(graph, conv.inputs[2], m) : nullptr;
    bool has_bias_input = conv.inputs.size() > 2 && conv.inputs[2] >= 0;
    if (!scale || !beta || !mean || !var || (has_bias_input && !bias)) continue;

    float eps = 1e-5f;
    if (const IrAttribute* e = bn.FindAttr("epsilon")) eps = e->f;
    auto wf = Floats(*w.constant);
    std::vector<float> new_w(wf.begin(), wf.end());
    std::vector<float> new_b(m);
    auto sc = Floats(*scale), bt = Floats(*beta), mu = Floats(*mean), vr = Floats(*var);
    for (size_t c = 0; c < m; ++c) {
      double s = static_cast<double>(sc[c]) / std::sqrt(static_cast<double>(vr[c]) + eps);
      for (size_t j = 0; j < per_filter; ++j) {
        new_w[c * per_filter + j] = static_cast<float>(new_w[c * per_filter + j] * s);
      }
      double b0 = bias ? Floats(*bias)[c] : 0.0;
      new_b[c] = static_cast<float>((b0 - mu[c]) * s + bt[c]);
    }
    std::string base = graph.values[static_cast<size_t>(conv.inputs[1])].name;
    int w_index = graph.AddConstant(
        base + "_bnfolded",
        ConstantData::FromVector<float>(DataType::kFloat32, w.shape, std::move(new_w)));
    int b_index =
        graph.AddConstant(base + "_bnfolded_bias",
                          ConstantData::FromVector<float>(
                              DataType::kFloat32, {static_cast<int64_t>(m)}, std::move(new_b)));
    conv.inputs.resize(3);
    conv.inputs[1] = w_index;
    conv.inputs[2] = b_index;
    conv.outputs[0] = bn.outputs[0];
    dead[k] = true;
    stats.changed++;
  }
  EraseNodes(graph, dead);
  return stats;
}

}  // namespace epctx::compile
