// FuseDnnlPostOps (passes.h): the element-wise work that follows a DnnlConv, DnnlMatMul or
// DnnlBatchMatMul becomes its post-ops: bias additions, activations (single nodes, or chains such
// as an exported GELU that elementwise_chain.h recognizes) and residual additions.
#include "compile/passes/dnnl_lowering.h"
#include "compile/passes/elementwise_chain.h"
#include "compile/passes/passes.h"
#include "exec/kernels/epctx_ops.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

bool HasPostOp(const IrNode& n, PostOpKind kind) {
  const IrAttribute* a = n.FindAttr(ops::kPostOps);
  if (a == nullptr) return false;
  for (int64_t k : a->ints) {
    if (k == static_cast<int64_t>(kind)) return true;
  }
  return false;
}

// The post-op an activation node applies to its first input, or false.
bool ActivationPostOp(const IrGraph& g, const IrNode& act, PostOpKind* kind, float* alpha,
                      float* beta) {
  *alpha = 0;
  *beta = 0;
  if (!act.domain.empty() || act.inputs.empty() || act.outputs.size() != 1) return false;
  auto attr_f = [&](std::string_view name, float fallback) {
    const IrAttribute* a = act.FindAttr(name);
    return a != nullptr ? a->f : fallback;
  };
  if (act.op_type == "Relu") {
    *kind = PostOpKind::kRelu;
  } else if (act.op_type == "LeakyRelu") {
    *kind = PostOpKind::kRelu;
    *alpha = attr_f("alpha", 0.01f);
  } else if (act.op_type == "Sigmoid") {
    *kind = PostOpKind::kSigmoid;
  } else if (act.op_type == "Tanh") {
    *kind = PostOpKind::kTanh;
  } else if (act.op_type == "HardSwish") {
    *kind = PostOpKind::kHardSwish;
  } else if (act.op_type == "Mish") {
    *kind = PostOpKind::kMish;
  } else if (act.op_type == "Elu") {
    *kind = PostOpKind::kElu;
    *alpha = attr_f("alpha", 1.0f);
  } else if (act.op_type == "Clip") {
    *kind = PostOpKind::kClip;
    *alpha = std::numeric_limits<float>::lowest();
    *beta = std::numeric_limits<float>::max();
    if (g.OpsetOf("") < 11) {
      *alpha = attr_f("min", *alpha);
      *beta = attr_f("max", *beta);
    } else {
      for (size_t k = 1; k < act.inputs.size() && k < 3; ++k) {
        if (act.inputs[k] < 0) continue;
        if (!ScalarConstant(g, act.inputs[k], k == 1 ? alpha : beta)) return false;
      }
    }
  } else {
    return false;
  }
  return true;
}

struct Uses {
  std::vector<int> count;
  std::vector<std::vector<int>> consumers;  // node indices, one entry per use
};

Uses FindUses(const IrGraph& g) {
  Uses u{CountUses(g), std::vector<std::vector<int>>(g.values.size())};
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    for (int i : g.nodes[k].inputs) {
      if (i >= 0) u.consumers[static_cast<size_t>(i)].push_back(static_cast<int>(k));
    }
  }
  return u;
}

bool IsDnnl(const IrNode& n) {
  return n.domain == ops::kDomain &&
         (n.op_type == ops::kDnnlConv || n.op_type == ops::kDnnlMatMul ||
          n.op_type == ops::kDnnlBatchMatMul);
}

// One fusion into the node at `k` (a DnnlConv or DnnlMatMul), or false when none applies.
bool FuseOne(IrGraph& g, size_t k, const Uses& uses, std::vector<bool>& dead) {
  IrNode& n = g.nodes[k];
  const int y = n.outputs[0];
  if (y < 0 || IsGraphOutput(g, y)) return false;
  const std::vector<int>& consumers = uses.consumers[static_cast<size_t>(y)];
  const IrValue& yv = ValueOf(g, y);

  // A chain of element-wise nodes computing one function of y (GELU, SiLU, ...).
  if (std::optional<ElementwiseChain> chain = FindElementwiseChain(g, k, y, dead)) {
    AppendPostOp(n, chain->function.kind, chain->function.alpha, chain->function.beta);
    n.outputs[0] = chain->output;
    for (size_t c : chain->nodes) dead[c] = true;
    return true;
  }
  if (uses.count[static_cast<size_t>(y)] != 1 || consumers.size() != 1) return false;
  const size_t c = static_cast<size_t>(consumers[0]);
  const size_t c_index = c;
  if (dead[c]) return false;
  IrNode& next = g.nodes[c];
  // MatMul + Add of a [N] constant: the bias, when nothing is applied before it.
  if (n.op_type == ops::kDnnlMatMul && IsOnnx(next, "Add") && next.inputs.size() == 2 &&
      (n.inputs.size() < 3 || n.inputs[2] < 0) && n.FindAttr(ops::kPostOps) == nullptr) {
    const int64_t cols = ValueOf(g, n.inputs[1]).shape.back();  // W is still [K, N] here
    const int bias = next.inputs[0] == y ? next.inputs[1] : next.inputs[0];
    // A bias of higher rank than y would broadcast y up: not a bias.
    const bool rank_ok = yv.shape_known ? ValueOf(g, bias).shape.size() <= yv.shape.size()
                                        : ValueOf(g, bias).shape.size() <= 1;
    if (bias != y && IsBiasFor(g, bias, cols) && rank_ok) {
      n.inputs.resize(3, -1);
      n.inputs[2] = bias;
      n.outputs[0] = next.outputs[0];
      dead[c] = true;
      return true;
    }
  }
  // y * c, c * y and y / c with a scalar constant c: a linear post-op (attention's scale).
  if ((IsOnnx(next, "Mul") || IsOnnx(next, "Div")) && next.inputs.size() == 2 &&
      next.outputs.size() == 1) {
    const bool y_first = next.inputs[0] == y;
    float c = 0;
    if ((y_first || IsOnnx(next, "Mul")) &&
        ScalarConstant(g, y_first ? next.inputs[1] : next.inputs[0], &c) &&
        (IsOnnx(next, "Mul") || c != 0)) {
      AppendPostOp(n, PostOpKind::kLinear, IsOnnx(next, "Mul") ? c : 1.0f / c, 0.0f);
      n.outputs[0] = next.outputs[0];
      dead[c_index] = true;
      return true;
    }
  }
  PostOpKind kind;
  float alpha = 0, beta = 0;
  if (next.inputs[0] == y && ActivationPostOp(g, next, &kind, &alpha, &beta)) {
    AppendPostOp(n, kind, alpha, beta);
    n.outputs[0] = next.outputs[0];
    dead[c] = true;
    return true;
  }
  // y + r with r of y's exact shape: the residual of ResNet-style blocks.
  if (n.op_type != ops::kDnnlBatchMatMul && IsOnnx(next, "Add") && next.inputs.size() == 2 &&
      next.outputs.size() == 1 && !HasPostOp(n, PostOpKind::kAddTensor) && n.inputs.size() <= 3) {
    const int r = next.inputs[0] == y ? next.inputs[1] : next.inputs[0];
    if (r == y || r < 0) return false;
    const IrValue& rv = ValueOf(g, r);
    if (!ProvablySameShape(yv, rv) || rv.dtype != DataType::kFloat32) return false;
    AppendPostOp(n, PostOpKind::kAddTensor, 0.0f, 0.0f);
    n.inputs.resize(3, -1);
    n.inputs.push_back(r);
    n.outputs[0] = next.outputs[0];
    // The residual may be computed after the convolution: the fused node runs where the Add did.
    g.nodes[c] = std::move(n);
    dead[k] = true;
    return true;
  }
  return false;
}

}  // namespace

Result<PassStats> FuseDnnlPostOps(IrGraph& graph) {
  PassStats stats{"fuse-dnnl-post-ops", 0};
  for (bool changed = true; changed;) {
    changed = false;
    Uses uses = FindUses(graph);
    std::vector<bool> dead(graph.nodes.size(), false);
    for (size_t k = 0; k < graph.nodes.size(); ++k) {
      if (dead[k]) continue;
      const IrNode& n = graph.nodes[k];
      if (!IsDnnl(n) || n.outputs.size() != 1) continue;
      if (FuseOne(graph, k, uses, dead)) {
        stats.changed++;
        changed = true;
      }
    }
    EraseNodes(graph, dead);
  }
  return stats;
}

}  // namespace epctx::compile
