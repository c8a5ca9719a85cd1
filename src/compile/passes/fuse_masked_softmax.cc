// Softmax over the last axis of masked, scaled attention scores becomes one com.epctx
// MaskedSoftmax (src/exec/kernels/norm/masked_softmax.cc). The chain it replaces, read backwards
// from the Softmax, each step optional and each intermediate read by the next step only:
//   Where(condition, scores, fill) or Where(condition, fill, scores), fill a constant scalar
//     (GPT-2's causal mask);
//   Add(scores, mask) (BERT's attention mask);
//   Div(scores, scale) or Mul(scores, scale) / Mul(scale, scores), scale one float32 element,
//     constant or computed at run time (GPT-2 computes sqrt(head size) from a Shape).
#include "compile/passes/passes.h"
#include "exec/kernels/epctx_ops.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

// A float32 of one element whose rank is at most 1, so that it cannot broadcast the scores up.
bool IsScalar(const IrGraph& g, int v) {
  if (!IsFloat32Tensor(g, v)) return false;
  const IrValue& x = ValueOf(g, v);
  if (!x.shape_known || x.shape.size() > 1) return false;
  return x.shape.empty() || x.shape[0] == 1;
}

// The constant float32 scalar `v` holds, if it is one and cannot broadcast the scores up.
bool ConstantScalar(const IrGraph& g, int v, float* value) {
  return IsScalar(g, v) && ScalarConstant(g, v, value);
}

// Softmax over the last axis only: -1, or rank - 1 when the rank is known. Before opset 13 the
// input is seen as 2-D from `axis` on, which is the last axis alone for those two values too.
bool OverLastAxis(const IrGraph& g, const IrNode& softmax) {
  const int64_t fallback = g.OpsetOf("") >= 13 ? -1 : 1;
  const IrAttribute* a = softmax.FindAttr("axis");
  const int64_t axis = a != nullptr ? a->i : fallback;
  if (axis == -1) return true;
  const IrValue& x = ValueOf(g, softmax.inputs[0]);
  return x.shape_known && axis == static_cast<int64_t>(x.shape.size()) - 1;
}

}  // namespace

Result<PassStats> FuseMaskedSoftmax(IrGraph& graph) {
  PassStats stats{"fuse-masked-softmax", 0};
  // Add and Div broadcast as numpy does from opset 7 on (before it, only B, and by attribute).
  if (graph.OpsetOf("") < 7) return stats;
  ChainMatcher m(graph);
  std::vector<bool>& dead = m.dead();
  auto sole_producer = [&](int v, const char* op) { return m.SoleProducer(v, op); };

  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    IrNode& softmax = graph.nodes[k];
    if (!softmax.domain.empty() || softmax.op_type != "Softmax" || softmax.inputs.size() != 1 ||
        softmax.outputs.size() != 1 || !IsFloat32Tensor(graph, softmax.inputs[0]) ||
        !OverLastAxis(graph, softmax)) {
      continue;
    }
    int scores = softmax.inputs[0];
    int condition = -1, addend = -1, scale = -1;
    float fill = 0;
    bool fill_when = false, divides = true;
    std::vector<int> fused;

    if (int w = sole_producer(scores, "Where"); w >= 0 && graph.nodes[w].inputs.size() == 3) {
      const IrNode& n = graph.nodes[static_cast<size_t>(w)];
      const int c = n.inputs[0];
      const bool bool_condition = c >= 0 && ValueOf(graph, c).is_plain_tensor() &&
                                  ValueOf(graph, c).dtype == DataType::kBool;
      if (bool_condition && ConstantScalar(graph, n.inputs[2], &fill) &&
          IsFloat32Tensor(graph, n.inputs[1])) {
        condition = c;
        fill_when = false;  // the fill where the condition is false
        scores = n.inputs[1];
        fused.push_back(w);
      } else if (bool_condition && ConstantScalar(graph, n.inputs[1], &fill) &&
                 IsFloat32Tensor(graph, n.inputs[2])) {
        condition = c;
        fill_when = true;
        scores = n.inputs[2];
        fused.push_back(w);
      }
    }
    if (int a = sole_producer(scores, "Add"); a >= 0 && graph.nodes[a].inputs.size() == 2) {
      const IrNode& n = graph.nodes[static_cast<size_t>(a)];
      if (IsFloat32Tensor(graph, n.inputs[0]) && IsFloat32Tensor(graph, n.inputs[1])) {
        // Addition commutes bit for bit; the scores are the side a scale may have made.
        const bool second =
            sole_producer(n.inputs[1], "Div") >= 0 || sole_producer(n.inputs[1], "Mul") >= 0;
        scores = n.inputs[second ? 1 : 0];
        addend = n.inputs[second ? 0 : 1];
        fused.push_back(a);
      }
    }
    if (int d = sole_producer(scores, "Div"); d >= 0 && graph.nodes[d].inputs.size() == 2) {
      const IrNode& n = graph.nodes[static_cast<size_t>(d)];
      if (IsFloat32Tensor(graph, n.inputs[0]) && IsScalar(graph, n.inputs[1])) {
        scores = n.inputs[0];
        scale = n.inputs[1];
        divides = true;
        fused.push_back(d);
      }
    } else if (int m = sole_producer(scores, "Mul"); m >= 0 && graph.nodes[m].inputs.size() == 2) {
      const IrNode& n = graph.nodes[static_cast<size_t>(m)];
      for (int side = 0; side < 2 && scale < 0; ++side) {
        if (IsFloat32Tensor(graph, n.inputs[side]) && IsScalar(graph, n.inputs[1 - side])) {
          scores = n.inputs[side];
          scale = n.inputs[1 - side];
          divides = false;
          fused.push_back(m);
        }
      }
    }
    if (fused.empty()) continue;

    for (int f : fused) dead[static_cast<size_t>(f)] = true;
    softmax.op_type = ops::kMaskedSoftmax;
    softmax.domain = ops::kDomain;
    softmax.inputs = {scores, scale, addend, condition};
    softmax.attrs.clear();
    softmax.SetInt("scale_divides", divides ? 1 : 0);
    softmax.SetFloat("fill", fill);
    softmax.SetInt("fill_when", fill_when ? 1 : 0);
    stats.changed += static_cast<int>(fused.size());
  }
  if (stats.changed > 0) graph.DeclareEpctxOpset();
  EraseNodes(graph, dead);
  return stats;
}

}  // namespace epctx::compile
