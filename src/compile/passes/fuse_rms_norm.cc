// RMS normalization as PyTorch exports it becomes ONNX Runtime's SimplifiedLayerNormalization,
// and a residual addition before one becomes com.microsoft SkipSimplifiedLayerNormalization, so a
// Llama exported from PyTorch runs the kernels an ONNX Runtime GenAI model names
// (src/exec/kernels/norm/): each row read once instead of by seven element-wise ops.
//
// The chain, matched backwards from the scale multiply, each intermediate read by the next step
// only:
//   Mul(weight, normed) or Mul(normed, weight), weight a float32 constant of the last dim [H]
//   normed = Mul(x, inv) or Mul(inv, x), inv = Div(1, root) or Reciprocal(root);
//         or Div(x, root)
//   root = Sqrt(Add(mean_square, epsilon)) (either order), epsilon a float32 constant
//   mean_square = ReduceMean(Pow(x, 2) or Mul(x, x)) over the last axis, keepdims
// becomes SimplifiedLayerNormalization(x, weight as [H]) with axis -1 and that epsilon.
// Then each SimplifiedLayerNormalization over the last axis whose X is Add(a, b) of two float32
// values of one shape (rank 2 or 3, its last dim the scale's [H]) becomes
// SkipSimplifiedLayerNormalization(a, b, scale), at the Add's place in the node order (its inputs
// exist there); its input_skip_bias_sum output is the Add's output when anything else reads it.

#include "compile/contrib/contrib_schemas.h"
#include "compile/passes/passes.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

// Whether `v` is a float32 constant of one element and rank 0 or 1 (so that it cannot raise the
// rank of what it is combined with); its value in `out`.
bool SmallScalar(const IrGraph& g, int v, float* out) {
  return ScalarConstant(g, v, out) && ValueOf(g, v).constant->shape.size() <= 1;
}

bool ScalarEquals(const IrGraph& g, int v, float want) {
  float value = 0;
  return SmallScalar(g, v, &value) && value == want;
}

// The last dim of `v` when its shape is known and that dim static, else -1.
int64_t StaticLastDim(const IrGraph& g, int v) {
  const IrValue& x = ValueOf(g, v);
  if (!x.shape_known || x.shape.empty()) return -1;
  return x.shape.back();
}

// Whether a ReduceMean keeps the dims and reduces exactly the last axis of its rank-`rank` input.
bool MeanOverLastAxis(const IrGraph& g, const IrNode& n, int64_t rank) {
  const IrAttribute* keep = n.FindAttr("keepdims");
  if (keep != nullptr && keep->i != 1) return false;
  const std::vector<int64_t> axes = IntsOf(g, n, "axes", 1);  // opset 18: axes as an input
  return axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1);
}

class Matcher : public ChainMatcher {
 public:
  explicit Matcher(IrGraph& graph) : ChainMatcher(graph) {}

  // The chain behind `normed` (x times 1 / root, or x over root) for input `x` of rank `rank`:
  // its epsilon and nodes, or false.
  bool MatchNormalized(int normed, int x, int64_t rank, float* epsilon,
                       std::vector<int>* chain) const {
    int root = -1;
    if (int d = SoleProducer(normed, "Div"); d >= 0 && node(d).inputs.size() == 2) {
      if (node(d).inputs[0] != x) return false;
      root = node(d).inputs[1];
      chain->push_back(d);
    } else if (int m = SoleProducer(normed, "Mul"); m >= 0 && node(m).inputs.size() == 2) {
      const int side = node(m).inputs[0] == x ? 1 : 0;
      if (node(m).inputs[1 - side] != x) return false;
      const int inv = node(m).inputs[side];
      chain->push_back(m);
      if (int r = SoleProducer(inv, "Reciprocal"); r >= 0 && node(r).inputs.size() == 1) {
        root = node(r).inputs[0];
        chain->push_back(r);
      } else if (int q = SoleProducer(inv, "Div"); q >= 0 && node(q).inputs.size() == 2 &&
                                                   ScalarEquals(g_, node(q).inputs[0], 1.0f)) {
        root = node(q).inputs[1];
        chain->push_back(q);
      } else {
        return false;
      }
    } else {
      return false;
    }
    const int s = SoleProducer(root, "Sqrt");
    if (s < 0 || node(s).inputs.size() != 1) return false;
    const int a = SoleProducer(node(s).inputs[0], "Add");
    if (a < 0 || node(a).inputs.size() != 2) return false;
    const int eps_side = SmallScalar(g_, node(a).inputs[1], epsilon) ? 1 : 0;
    if (eps_side == 0 && !SmallScalar(g_, node(a).inputs[0], epsilon)) return false;
    const int r = SoleProducer(node(a).inputs[1 - eps_side], "ReduceMean");
    if (r < 0 || node(r).inputs.empty() || !MeanOverLastAxis(g_, node(r), rank)) return false;
    const int squared = node(r).inputs[0];
    if (int p = SoleProducer(squared, "Pow"); p >= 0 && node(p).inputs.size() == 2) {
      if (node(p).inputs[0] != x || !ScalarEquals(g_, node(p).inputs[1], 2.0f)) return false;
      chain->push_back(p);
    } else if (int m = SoleProducer(squared, "Mul"); m >= 0 && node(m).inputs.size() == 2) {
      if (node(m).inputs[0] != x || node(m).inputs[1] != x) return false;
      chain->push_back(m);
    } else {
      return false;
    }
    chain->insert(chain->end(), {s, a, r});
    return true;
  }

  // The Mul at `k` scaling a normalized x by a constant weight becomes
  // SimplifiedLayerNormalization.
  bool FuseScaleMul(size_t k) {
    IrNode& mul = g_.nodes[k];
    if (!mul.domain.empty() || mul.op_type != "Mul" || mul.inputs.size() != 2 ||
        mul.outputs.size() != 1) {
      return false;
    }
    for (int side = 0; side < 2; ++side) {
      const int weight = mul.inputs[side];
      const int normed = mul.inputs[1 - side];
      const int producer = SoleProducer(normed, "Mul") >= 0 ? SoleProducer(normed, "Mul")
                                                            : SoleProducer(normed, "Div");
      if (!IsFloat32Tensor(g_, weight) || !ValueOf(g_, weight).is_constant() || producer < 0)
        continue;
      // x is the input the normalizing Mul or Div shares with the squaring.
      for (int x : node(producer).inputs) {
        const int64_t hidden = IsFloat32Tensor(g_, x) ? StaticLastDim(g_, x) : -1;
        if (hidden < 1 || !IsRowOf(weight, hidden, ValueOf(g_, x).shape.size())) continue;
        float epsilon = 0;
        std::vector<int> chain;
        if (!MatchNormalized(normed, x, static_cast<int64_t>(ValueOf(g_, x).shape.size()), &epsilon,
                             &chain)) {
          continue;
        }
        for (int c : chain) dead_[static_cast<size_t>(c)] = true;
        mul.op_type = "SimplifiedLayerNormalization";
        mul.inputs = {x, AsVector(weight, hidden)};
        mul.attrs.clear();
        mul.SetInt("axis", -1);
        mul.SetFloat("epsilon", epsilon);
        changed_ += static_cast<int>(chain.size());
        return true;
      }
    }
    return false;
  }

  // SimplifiedLayerNormalization at `k` over the last axis of Add(a, b) becomes
  // SkipSimplifiedLayerNormalization at the Add's place.
  bool FuseResidualAdd(size_t k) {
    const IrNode& norm = g_.nodes[k];
    if (dead_[k] || !norm.domain.empty() || norm.op_type != "SimplifiedLayerNormalization" ||
        norm.inputs.size() != 2 || norm.outputs.empty() || norm.outputs.size() > 2) {
      return false;
    }
    const int x = norm.inputs[0];
    const int scale = norm.inputs[1];
    if (!IsFloat32Tensor(g_, x) || norm.outputs[0] < 0) return false;
    const IrAttribute* axis = norm.FindAttr("axis");
    const IrValue& xv = ValueOf(g_, x);
    const int64_t rank = xv.shape_known ? static_cast<int64_t>(xv.shape.size()) : -1;
    if (rank != 2 && rank != 3) return false;
    if (axis != nullptr && axis->i != -1 && axis->i != rank - 1) return false;
    const int64_t hidden = StaticLastDim(g_, x);
    if (hidden < 1 || !IsFloat32Tensor(g_, scale) || !ValueOf(g_, scale).shape_known ||
        ValueOf(g_, scale).shape != std::vector{hidden}) {
      return false;
    }
    // The fused node takes the Add's place, where its inputs exist (the scale too, unless a node
    // after the Add makes it) and before every other reader of the sum.
    const int p = producer_[static_cast<size_t>(x)];
    if (p < 0 || dead_[static_cast<size_t>(p)] || producer_[static_cast<size_t>(scale)] > p) {
      return false;
    }
    const IrNode& add = node(p);
    if (!add.domain.empty() || add.op_type != "Add" || add.inputs.size() != 2 ||
        add.outputs.size() != 1 || !IsFloat32Tensor(g_, add.inputs[0]) ||
        !IsFloat32Tensor(g_, add.inputs[1]) ||
        !ProvablySameShape(ValueOf(g_, add.inputs[0]), ValueOf(g_, add.inputs[1])) ||
        !ProvablySameShape(ValueOf(g_, add.inputs[0]), ValueOf(g_, x))) {
      return false;
    }
    const bool sum_read_elsewhere = uses_[static_cast<size_t>(x)] > 1 || IsGraphOutput(g_, x);
    IrNode fused;
    fused.name = norm.name;
    fused.op_type = "SkipSimplifiedLayerNormalization";
    fused.domain = kMicrosoftDomain;
    fused.inputs = {add.inputs[0], add.inputs[1], scale};
    const int inv_std = norm.outputs.size() > 1 ? norm.outputs[1] : -1;
    fused.outputs = {norm.outputs[0], -1, inv_std, sum_read_elsewhere ? x : -1};
    const IrAttribute* eps = norm.FindAttr("epsilon");
    fused.SetFloat("epsilon", eps != nullptr ? eps->f : 1e-5f);
    g_.nodes[static_cast<size_t>(p)] = std::move(fused);
    dead_[k] = true;
    ++changed_;
    return true;
  }

  int changed() const { return changed_; }
  const std::vector<bool>& dead() const { return dead_; }

 private:
  // Whether constant `w` holds one value per element of a row of `hidden` and multiplying by it
  // cannot raise an input of rank `rank` (its dims all 1 but the last).
  bool IsRowOf(int w, int64_t hidden, size_t rank) const {
    const std::vector<int64_t>& shape = ValueOf(g_, w).constant->shape;
    if (shape.empty() || shape.size() > rank || shape.back() != hidden) return false;
    for (size_t d = 0; d + 1 < shape.size(); ++d) {
      if (shape[d] != 1) return false;
    }
    return true;
  }

  // Constant `w` seen as [hidden] (a new constant over the same bytes when its shape differs).
  int AsVector(int w, int64_t hidden) {
    const std::shared_ptr<ConstantData>& c = ValueOf(g_, w).constant;
    if (c->shape.size() == 1) return w;
    auto flat = std::make_shared<ConstantData>(*c);
    flat->shape = {hidden};
    return g_.AddConstant(ValueOf(g_, w).name, std::move(flat));
  }

  int changed_ = 0;
};

}  // namespace

Result<PassStats> FuseRmsNorms(IrGraph& graph) {
  PassStats stats{"fuse-rms-norm", 0};
  // ReduceMean's keepdims and Add's broadcasting as read here hold from opset 7.
  if (graph.OpsetOf("") < 7) return stats;
  // Two rounds, each with the uses and producers of the graph as it enters it: the residual
  // round must not count the readers the first one removed.
  Matcher norms(graph);
  for (size_t k = 0; k < graph.nodes.size(); ++k) norms.FuseScaleMul(k);
  EraseNodes(graph, norms.dead());
  Matcher residuals(graph);
  for (size_t k = 0; k < graph.nodes.size(); ++k) residuals.FuseResidualAdd(k);
  EraseNodes(graph, residuals.dead());
  if (residuals.changed() > 0 && graph.opsets.count(kMicrosoftDomain) == 0)
    graph.opsets[kMicrosoftDomain] = 1;
  stats.changed = norms.changed() + residuals.changed();
  return stats;
}

}  // namespace epctx::compile
