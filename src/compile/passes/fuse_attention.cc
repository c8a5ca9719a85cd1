// The attention a PyTorch export spells out node by node becomes one com.epctx Attention node:
//
//   scores = MatMul(Q, Transpose(RepeatKv(K), [0, 1, 3, 2]))   Q [B, N, S, H], K [B, kvN, T, H]
//   scores = Div(scores, c) | Mul(scores, c)                     (optional, scalar constant)
//   scores = Where(mask, fill, scores)                           (optional, scalar fill)
//   out    = MatMul(Softmax(scores, -1), RepeatKv(V))
//   out    = Transpose(out, [0, 2, 1, 3])                        (optional: [B, S, N, H])
//
// where RepeatKv(X) = Reshape(Expand(Unsqueeze(X, 2), ...), ...) lets N / kvN query heads share
// each key/value head (Hugging Face's repeat_kv), or is X itself when N == kvN. The kernel
// (exec/kernels/attention/) reads each key and value row once for the heads that share it and
// keeps the scores of a row in cache; the separate nodes wrote the repeated keys and values (3x
// the cache for SmolLM), the scores and the probabilities, and a oneDNN matmul of a new shape
// was generated for every new past length of a decode loop.
#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "compile/passes/passes.h"
#include "exec/kernels/attention/attention_op.h"
#include "exec/kernels/epctx_ops.h"

namespace epctx::compile {
namespace {

struct AttentionMatcher {
  const IrGraph& graph;
  const std::vector<int>& producers;
  const std::vector<int>& uses;
  const std::vector<int>& readers;  // of each value, the last node reading it (-1: none)

  const IrNode* Producer(int v, std::string_view op) const {
    if (v < 0) return nullptr;
    const int p = producers[static_cast<size_t>(v)];
    if (p < 0) return nullptr;
    const IrNode& n = graph.nodes[static_cast<size_t>(p)];
    return n.domain.empty() && n.op_type == op ? &n : nullptr;
  }
  bool SingleUse(int v) const { return v >= 0 && uses[static_cast<size_t>(v)] == 1; }
  // The one node reading `v` as its first input, when it is an ONNX `op`; else null.
  const IrNode* OnlyReader(int v, std::string_view op) const {
    if (!SingleUse(v)) return nullptr;
    const int r = readers[static_cast<size_t>(v)];
    if (r < 0) return nullptr;
    const IrNode& n = graph.nodes[static_cast<size_t>(r)];
    return n.domain.empty() && n.op_type == op && !n.inputs.empty() && n.inputs[0] == v ? &n
                                                                                        : nullptr;
  }
  int NodeIndex(const IrNode* n) const { return static_cast<int>(n - graph.nodes.data()); }
};

bool IsPerm(const IrGraph& graph, const IrNode& n, std::vector<int64_t> perm) {
  return IntsOf(graph, n, "perm", 99) == perm;
}

// The static dims of a value of rank 4 or unknown rank (-1 where unknown); empty when the rank
// is known and not 4. A prefill graph's reshapes to heads take their shapes from Shape nodes, so
// the compiler often knows neither rank nor dims there; the kernel checks them at run time.
std::vector<int64_t> Rank4(const IrValue& v) {
  if (!v.is_plain_tensor()) return {};
  if (!v.shape_known) return {-1, -1, -1, -1};
  return v.shape.size() == 4 ? v.shape : std::vector<int64_t>{};
}

// The one value of the known dims among `dims` (-1 when none is known), or -2 when two differ.
int64_t AgreedDim(std::initializer_list<int64_t> dims) {
  int64_t agreed = -1;
  for (int64_t d : dims) {
    if (d < 0) continue;
    if (agreed >= 0 && d != agreed) return -2;
    agreed = d;
  }
  return agreed;
}

// X of RepeatKv(X), with the nodes it consists of appended to `parts`; `x` itself when it is not
// one (group 1).
int RepeatedFrom(const AttentionMatcher& m, int x, std::vector<int>& parts) {
  if (!m.SingleUse(x)) return x;
  const IrNode* reshape = m.Producer(x, "Reshape");
  if (reshape == nullptr || !m.SingleUse(reshape->inputs[0])) return x;
  const IrNode* expand = m.Producer(reshape->inputs[0], "Expand");
  if (expand == nullptr || !m.SingleUse(expand->inputs[0])) return x;
  const IrNode* unsqueeze = m.Producer(expand->inputs[0], "Unsqueeze");
  if (unsqueeze == nullptr || IntsOf(m.graph, *unsqueeze, "axes", 1) != std::vector<int64_t>{2}) {
    return x;
  }
  const IrValue& expanded = ValueOf(m.graph, reshape->inputs[0]);
  if (expanded.shape_known && expanded.shape.size() != 5) return x;
  parts.push_back(m.NodeIndex(reshape));
  parts.push_back(m.NodeIndex(expand));
  if (m.SingleUse(unsqueeze->outputs[0])) parts.push_back(m.NodeIndex(unsqueeze));
  return unsqueeze->inputs[0];
}

float ScalarOf(const IrGraph& graph, int v, bool* ok) {
  float f = 0;
  *ok = ScalarConstant(graph, v, &f);
  return f;
}

}  // namespace

Result<PassStats> FuseAttention(IrGraph& graph) {
  PassStats stats{"fuse-attention", 0};
  const std::vector<int> producers = Producers(graph);
  const std::vector<int> uses = CountUses(graph);
  std::vector<int> readers(graph.values.size(), -1);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (int v : graph.nodes[i].inputs) {
      if (v >= 0) readers[static_cast<size_t>(v)] = static_cast<int>(i);
    }
  }
  const AttentionMatcher m{graph, producers, uses, readers};
  std::vector<bool> dead(graph.nodes.size(), false);
  std::vector<IrNode> fused;  // (replacing the node at fused_at[i])
  std::vector<size_t> fused_at;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const IrNode& softmax = graph.nodes[i];
    if (!softmax.domain.empty() || softmax.op_type != "Softmax" || dead[i]) continue;
    // Before opset 13 Softmax flattened from its axis on (default 1): over the last axis both
    // definitions agree.
    const int64_t axis =
        softmax.FindAttr("axis") ? softmax.FindAttr("axis")->i : (graph.OpsetOf("") >= 13 ? -1 : 1);
    if (axis != -1 && axis != 3) continue;
    std::vector<int> parts = {static_cast<int>(i)};
    int scores = softmax.inputs[0];
    int mask = -1;
    float fill = 0, scale = 1;
    if (const IrNode* where = m.Producer(scores, "Where");
        where != nullptr && m.SingleUse(scores)) {
      bool ok = false;
      fill = ScalarOf(graph, where->inputs[1], &ok);
      // The kernel adds the fill to a masked score: the sum is the fill itself (as Where makes it)
      // when the fill is -infinity or large enough to absorb any score (PyTorch's exports use
      // -infinity or the lowest float); a fill such as -1e4 would leave a masked row's scores in.
      if (!ok || fill > -1e30f || ValueOf(graph, where->inputs[0]).dtype != DataType::kBool) {
        continue;
      }
      // The mask must not broadcast the scores up (the kernel's output has the scores' shape);
      // where the compiler does not know both shapes, the kernel refuses such a mask at run time.
      const IrValue& masked = ValueOf(graph, where->outputs[0]);
      const IrValue& unmasked = ValueOf(graph, where->inputs[2]);
      if (masked.shape_known && unmasked.shape_known && masked.shape != unmasked.shape) continue;
      mask = where->inputs[0];
      scores = where->inputs[2];
      parts.push_back(m.NodeIndex(where));
    }
    if (const IrNode* div = m.Producer(scores, "Div"); div != nullptr && m.SingleUse(scores)) {
      bool ok = false;
      const float c = ScalarOf(graph, div->inputs[1], &ok);
      if (!ok || c == 0) continue;
      scale = 1 / c;
      scores = div->inputs[0];
      parts.push_back(m.NodeIndex(div));
    } else if (const IrNode* mul = m.Producer(scores, "Mul");
               mul != nullptr && m.SingleUse(scores)) {
      bool ok = false;
      int other = mul->inputs[0];
      scale = ScalarOf(graph, mul->inputs[1], &ok);
      if (!ok) {
        scale = ScalarOf(graph, mul->inputs[0], &ok);
        other = mul->inputs[1];
      } else {
        other = mul->inputs[0];
      }
      if (!ok) continue;
      scores = other;
      parts.push_back(m.NodeIndex(mul));
    }
    const IrNode* qk = m.Producer(scores, "MatMul");
    if (qk == nullptr || !m.SingleUse(scores) || !m.SingleUse(qk->inputs[1])) continue;
    const IrNode* kt = m.Producer(qk->inputs[1], "Transpose");
    if (kt == nullptr || !IsPerm(graph, *kt, {0, 1, 3, 2})) continue;
    parts.push_back(m.NodeIndex(qk));
    parts.push_back(m.NodeIndex(kt));
    const int q = qk->inputs[0];
    const int k = RepeatedFrom(m, kt->inputs[0], parts);
    // The probabilities' one reader: the product with the values.
    const int probs = softmax.outputs[0];
    const IrNode* pv = m.OnlyReader(probs, "MatMul");
    if (pv == nullptr || pv->inputs.size() != 2) continue;
    parts.push_back(m.NodeIndex(pv));
    const int v = RepeatedFrom(m, pv->inputs[1], parts);
    int out = pv->outputs[0];
    int64_t layout = exec::kernels::kAttentionOutputBnsh;
    size_t last = static_cast<size_t>(m.NodeIndex(pv));
    if (const IrNode* back = m.OnlyReader(out, "Transpose");
        back != nullptr && IsPerm(graph, *back, {0, 2, 1, 3})) {
      parts.push_back(m.NodeIndex(back));
      out = back->outputs[0];
      layout = exec::kernels::kAttentionOutputBsnh;
      last = static_cast<size_t>(m.NodeIndex(back));
    }
    // Shapes: Q [B, N, S, H], K and V [B, kvN, T, H] with N a multiple of kvN, all float32.
    // The head size must be known (a multiple of 8: the kernel's loops take 8 lanes, as
    // GroupQueryAttention's) and so must kvN; the rest the kernel checks at run time.
    const std::vector<int64_t> qs = Rank4(ValueOf(graph, q));
    const std::vector<int64_t> ks = Rank4(ValueOf(graph, k));
    const std::vector<int64_t> vs = Rank4(ValueOf(graph, v));
    if (qs.empty() || ks.empty() || vs.empty()) continue;
    const int64_t head_size = AgreedDim({qs[3], ks[3], vs[3]});
    const int64_t kv_heads = AgreedDim({ks[1], vs[1]});
    if (head_size <= 0 || head_size % 8 != 0 || kv_heads <= 0) continue;
    if (qs[1] > 0 && qs[1] % kv_heads != 0) continue;
    if (ValueOf(graph, q).dtype != DataType::kFloat32 ||
        ValueOf(graph, k).dtype != DataType::kFloat32 ||
        ValueOf(graph, v).dtype != DataType::kFloat32) {
      continue;
    }
    // Both repeats matched, or neither: then the product itself shares K and V between the
    // heads only by broadcasting one KV head, or N == kvN.
    const bool k_repeated = k != kt->inputs[0], v_repeated = v != pv->inputs[1];
    if (k_repeated != v_repeated) continue;
    if (!k_repeated && kv_heads != 1 && qs[1] != kv_heads) continue;
    if (std::any_of(parts.begin(), parts.end(),
                    [&](int p) { return dead[static_cast<size_t>(p)]; })) {
      continue;
    }
    IrNode node;
    node.name = softmax.name + "_attention";
    node.op_type = ops::kAttention;
    node.domain = ops::kDomain;
    node.inputs = {q, k, v, mask};
    node.outputs = {out};
    node.SetFloat(exec::kernels::attention_attr::kScale, scale);
    node.SetInt(exec::kernels::attention_attr::kOutputLayout, layout);
    if (mask >= 0) node.SetFloat(exec::kernels::attention_attr::kMaskFill, fill);
    for (int p : parts) dead[static_cast<size_t>(p)] = true;
    dead[last] = false;
    fused.push_back(std::move(node));
    fused_at.push_back(last);
    stats.changed++;
  }
  for (size_t f = 0; f < fused.size(); ++f) graph.nodes[fused_at[f]] = std::move(fused[f]);
  EraseNodes(graph, dead);
  if (stats.changed > 0) graph.DeclareEpctxOpset();
  return stats;
}

}  // namespace epctx::compile
