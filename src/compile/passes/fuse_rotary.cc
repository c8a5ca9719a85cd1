// PyTorch's rotary embedding (Hugging Face's apply_rotary_pos_emb) as a Llama export spells it,
// for the queries and again for the keys of every layer:
//   Add(Mul(x, cos), Mul(Concat(Neg(Slice(x, s, end)), Slice(x, 0, s), axis -1), sin))
// seven nodes on a few hundred floats each in a decode step, becomes one com.epctx RotateHalf(x,
// cos, sin, s) (exec/kernels/attention/rotate_half.cc), which computes the same products and sum
// in the same order, bit for bit. The split s is usually computed at run time (the last dim of x
// halved, from a Shape); both Slices must take it from the same value, or from Unsqueezes of the
// same value, or be the same constant, so that the Concat is as long as x's last dim. Each
// intermediate must be read by the next step only. Either operand order of the Muls and the Add.
#include <vector>

#include "compile/passes/passes.h"
#include "exec/kernels/epctx_ops.h"

namespace epctx::compile {
namespace {

// Slice ends meaning "to the end" whatever the dim: PyTorch writes INT64_MAX.
constexpr int64_t kToTheEnd = int64_t{1} << 31;

class RotaryMatcher : public ChainMatcher {
 public:
  explicit RotaryMatcher(IrGraph& graph) : ChainMatcher(graph) {}

  // Whether `axis` names the last axis of x.
  bool LastAxis(int x, int64_t axis) const {
    if (axis == -1) return true;
    const IrValue& v = ValueOf(g_, x);
    return v.shape_known && axis == static_cast<int64_t>(v.shape.size()) - 1;
  }

  // A Slice of x along its last axis, step 1 (given or implied); its starts and ends inputs.
  bool SliceOfX(int node, int x, int* starts, int* ends) const {
    const IrNode& n = g_.nodes[static_cast<size_t>(node)];
    if (n.inputs.size() < 4 || n.inputs[0] != x || n.inputs[1] < 0 || n.inputs[2] < 0) {
      return false;
    }
    const std::vector<int64_t> axes = IntsOf(g_, n, "", 3);
    if (axes.size() != 1 || !LastAxis(x, axes[0])) return false;
    if (n.inputs.size() > 4 && n.inputs[4] >= 0 &&
        IntsOf(g_, n, "", 4) != std::vector<int64_t>{1}) {
      return false;
    }
    *starts = n.inputs[1];
    *ends = n.inputs[2];
    return true;
  }

  // Whether Slice bounds `a` and `b` hold the same one value: the same value, Unsqueezes of the
  // same value by the same axes, or equal constants.
  bool SameBound(int a, int b) const {
    if (a == b) return true;
    const IrValue& va = ValueOf(g_, a);
    const IrValue& vb = ValueOf(g_, b);
    if (va.constant && vb.constant) {
      const std::vector<int64_t> ia = Int64Values(va), ib = Int64Values(vb);
      return ia.size() == 1 && ia == ib;
    }
    const int pa = producer_[static_cast<size_t>(a)], pb = producer_[static_cast<size_t>(b)];
    if (pa < 0 || pb < 0) return false;
    const IrNode& na = g_.nodes[static_cast<size_t>(pa)];
    const IrNode& nb = g_.nodes[static_cast<size_t>(pb)];
    if (!na.domain.empty() || !nb.domain.empty() || na.op_type != "Unsqueeze" ||
        nb.op_type != "Unsqueeze" || na.inputs.empty() || nb.inputs.empty() ||
        na.inputs[0] != nb.inputs[0]) {
      return false;
    }
    const std::vector<int64_t> axes = IntsOf(g_, na, "axes", 1);
    return !axes.empty() && axes == IntsOf(g_, nb, "axes", 1);
  }

  // Whether a Slice end reaches the end of x's last dim whatever it is at run time.
  bool ToTheEnd(int x, int ends) const {
    const std::vector<int64_t> e = Int64Values(ValueOf(g_, ends));
    if (e.size() != 1) return false;
    const IrValue& v = ValueOf(g_, x);
    const int64_t dim = v.shape_known && !v.shape.empty() ? v.shape.back() : -1;
    return e[0] >= kToTheEnd || (dim >= 0 && e[0] >= dim);
  }

  // rotate_half(x) = Concat(Neg(x[..., s:]), x[..., :s]) read by one Mul: sets x and the split.
  bool RotateHalf(int concat, int* x, int* split, std::vector<int>* fused) const {
    const IrNode& c = g_.nodes[static_cast<size_t>(concat)];
    if (c.inputs.size() != 2) return false;
    const int neg = SoleProducer(c.inputs[0], "Neg");
    const int head = SoleProducer(c.inputs[1], "Slice");
    if (neg < 0 || head < 0 || g_.nodes[static_cast<size_t>(neg)].inputs.size() != 1) return false;
    const int tail = SoleProducer(g_.nodes[static_cast<size_t>(neg)].inputs[0], "Slice");
    if (tail < 0) return false;
    const int source = g_.nodes[static_cast<size_t>(tail)].inputs[0];
    if (!IsFloat32Tensor(g_, source) || !LastAxis(source, IntAttr(c, "axis", 0))) return false;
    int tail_starts, tail_ends, head_starts, head_ends;
    if (!SliceOfX(tail, source, &tail_starts, &tail_ends) ||
        !SliceOfX(head, source, &head_starts, &head_ends) || !ToTheEnd(source, tail_ends) ||
        Int64Values(ValueOf(g_, head_starts)) != std::vector<int64_t>{0} ||
        !SameBound(tail_starts, head_ends)) {
      return false;
    }
    *x = source;
    *split = tail_starts;
    fused->insert(fused->end(), {concat, neg, tail, head});
    return true;
  }
};

}  // namespace

Result<PassStats> FuseRotateHalf(IrGraph& graph) {
  PassStats stats{"fuse-rotate-half", 0};
  if (graph.OpsetOf("") < 10) return stats;  // Slice takes its bounds as inputs from opset 10
  RotaryMatcher m(graph);
  for (IrNode& add : graph.nodes) {
    if (!add.domain.empty() || add.op_type != "Add" || add.inputs.size() != 2 ||
        add.outputs.size() != 1 || !IsFloat32Tensor(graph, add.outputs[0])) {
      continue;
    }
    for (int side = 0; side < 2; ++side) {
      const int cos_mul = m.SoleProducer(add.inputs[side], "Mul");
      const int sin_mul = m.SoleProducer(add.inputs[1 - side], "Mul");
      if (cos_mul < 0 || sin_mul < 0) continue;
      const IrNode& sm = graph.nodes[static_cast<size_t>(sin_mul)];
      const IrNode& cm = graph.nodes[static_cast<size_t>(cos_mul)];
      if (sm.inputs.size() != 2 || cm.inputs.size() != 2) continue;
      int x = -1, split = -1, sin = -1;
      std::vector<int> fused = {cos_mul, sin_mul};
      for (int s = 0; s < 2 && x < 0; ++s) {
        const int concat = m.SoleProducer(sm.inputs[s], "Concat");
        if (concat >= 0 && m.RotateHalf(concat, &x, &split, &fused)) sin = sm.inputs[1 - s];
      }
      if (x < 0) continue;
      const int cos = cm.inputs[0] == x ? cm.inputs[1] : cm.inputs[1] == x ? cm.inputs[0] : -1;
      if (!IsFloat32Tensor(graph, cos) || !IsFloat32Tensor(graph, sin)) continue;
      for (int f : fused) m.dead()[static_cast<size_t>(f)] = true;
      add.op_type = ops::kRotateHalf;
      add.domain = ops::kDomain;
      add.inputs = {x, cos, sin, split};
      add.attrs.clear();
      stats.changed += static_cast<int>(fused.size());
      break;
    }
  }
  if (stats.changed > 0) graph.DeclareEpctxOpset();
  EraseNodes(graph, m.dead());
  return stats;
}

}  // namespace epctx::compile
