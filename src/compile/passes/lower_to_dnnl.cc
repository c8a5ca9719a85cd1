// Convolutions and matrix products with constant float32 weights become com.epctx DnnlConv and
// DnnlMatMul nodes (run by oneDNN), and the element-wise work that follows them becomes their
// post-ops: bias additions, activations (single nodes, or chains such as an exported GELU that
// elementwise_chain.h recognizes) and residual additions.
#include <limits>
#include <optional>

#include "compile/passes/elementwise_chain.h"
#include "compile/passes/passes.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/onednn/post_ops.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

using exec::kernels::onednn::PostOpKind;

bool IsOnnx(const IrNode& n, std::string_view op) {
  return n.domain.empty() && n.op_type == op;
}

void AppendPostOp(IrNode& n, PostOpKind kind, float alpha, float beta) {
  std::vector<int64_t> kinds;
  std::vector<float> alphas, betas;
  if (const IrAttribute* a = n.FindAttr(ops::kPostOps)) kinds = a->ints;
  if (const IrAttribute* a = n.FindAttr(ops::kPostOpAlpha)) alphas = a->floats;
  if (const IrAttribute* a = n.FindAttr(ops::kPostOpBeta)) betas = a->floats;
  kinds.push_back(static_cast<int64_t>(kind));
  alphas.push_back(alpha);
  betas.push_back(beta);
  n.SetInts(ops::kPostOps, std::move(kinds));
  n.SetFloats(ops::kPostOpAlpha, std::move(alphas));
  n.SetFloats(ops::kPostOpBeta, std::move(betas));
}

bool HasPostOp(const IrNode& n, PostOpKind kind) {
  const IrAttribute* a = n.FindAttr(ops::kPostOps);
  if (a == nullptr) return false;
  for (int64_t k : a->ints) {
    if (k == static_cast<int64_t>(kind)) return true;
  }
  return false;
}

bool IsFloatConstant(const IrGraph& g, int index) {
  return index >= 0 && ValueOf(g, index).constant &&
         ValueOf(g, index).constant->dtype == DataType::kFloat32 &&
         ValueOf(g, index).constant->layout == 0;
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

// Whether two values have the same shape whatever the run: equal static dims, or unknown dims
// with the same symbolic name.
bool SameShape(const IrValue& a, const IrValue& b) {
  if (!a.shape_known || !b.shape_known || a.shape.size() != b.shape.size()) return false;
  for (size_t i = 0; i < a.shape.size(); ++i) {
    if (a.shape[i] >= 0 || b.shape[i] >= 0) {
      if (a.shape[i] != b.shape[i]) return false;
      continue;
    }
    if (i >= a.dim_names.size() || i >= b.dim_names.size() || a.dim_names[i].empty() ||
        a.dim_names[i] != b.dim_names[i]) {
      return false;
    }
  }
  return true;
}

bool IsDnnl(const IrNode& n) {
  return n.domain == ops::kDomain &&
         (n.op_type == ops::kDnnlConv || n.op_type == ops::kDnnlMatMul ||
          n.op_type == ops::kDnnlBatchMatMul);
}

// A constant that is a bias for an output of `n` columns: [N] or [1, ..., 1, N].
bool IsBiasFor(const IrGraph& g, int v, int64_t n) {
  if (!IsFloatConstant(g, v)) return false;
  const std::vector<int64_t>& s = ValueOf(g, v).shape;
  if (s.empty() || s.back() != n) return false;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] != 1) return false;
  }
  return true;
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
    if (!SameShape(yv, rv) || rv.dtype != DataType::kFloat32) return false;
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

Result<PassStats> LowerConvsToDnnl(IrGraph& graph) {
  PassStats stats{"lower-conv-dnnl", 0};
  for (IrNode& n : graph.nodes) {
    const bool fused = n.IsOp(ops::kDomain, ops::kFusedConv);
    if (!IsOnnx(n, "Conv") && !fused) continue;
    if (n.inputs.size() < 2 || n.outputs.size() != 1 || n.inputs[0] < 0) continue;
    if (!IsFloatConstant(graph, n.inputs[1])) continue;
    const IrValue& x = ValueOf(graph, n.inputs[0]);
    const IrValue& w = ValueOf(graph, n.inputs[1]);
    if (x.dtype != DataType::kFloat32 || !x.shape_known || x.shape.size() != w.shape.size() ||
        w.shape.size() < 3 || w.shape.size() > 5) {
      continue;
    }
    if (n.inputs.size() > 2 && n.inputs[2] >= 0 &&
        ValueOf(graph, n.inputs[2]).dtype != DataType::kFloat32) {
      continue;
    }
    if (fused) {
      const IrAttribute* act = n.FindAttr(ops::kActivation);
      const IrAttribute* params = n.FindAttr(ops::kActivationParams);
      if (act == nullptr) continue;
      if (act->s == "Relu") {
        AppendPostOp(n, PostOpKind::kRelu, 0, 0);
      } else if (act->s == "Sigmoid") {
        AppendPostOp(n, PostOpKind::kSigmoid, 0, 0);
      } else if (act->s == "Clip" && params != nullptr && params->floats.size() == 2) {
        AppendPostOp(n, PostOpKind::kClip, params->floats[0], params->floats[1]);
      } else {
        continue;
      }
      n.RemoveAttr(ops::kActivation);
      n.RemoveAttr(ops::kActivationParams);
    }
    if (n.FindAttr("kernel_shape") == nullptr) {
      n.SetInts("kernel_shape", std::vector<int64_t>(w.shape.begin() + 2, w.shape.end()));
    }
    n.op_type = ops::kDnnlConv;
    n.domain = ops::kDomain;
    stats.changed++;
  }
  if (stats.changed > 0) graph.DeclareEpctxOpset();
  return stats;
}

namespace {

std::vector<float> PlainValues(const float* src, int64_t rows, int64_t cols, bool transposed,
                               float alpha) {
  std::vector<float> out(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const float x = src[i * cols + j] * alpha;
      if (transposed) {
        out[static_cast<size_t>(j * rows + i)] = x;
      } else {
        out[static_cast<size_t>(i * cols + j)] = x;
      }
    }
  }
  return out;
}

// `b` as float32 [K, N], times alpha: a new constant unless it already is that. A deferred `b`
// (its bytes made when the blob is written) gives a deferred result.
int PlainWeight(IrGraph& g, int b, bool transposed, float alpha) {
  if (!transposed && alpha == 1.0f) return b;
  const IrValue& v = ValueOf(g, b);
  const int64_t rows = v.shape[0], cols = v.shape[1];
  std::vector<int64_t> shape =
      transposed ? std::vector<int64_t>{cols, rows} : std::vector<int64_t>{rows, cols};
  const std::string name = v.name + "_kn";
  if (v.constant->deferred()) {
    std::shared_ptr<const ConstantData> source = v.constant;
    auto make = [source, rows, cols, transposed, alpha, shape]() -> Result<Tensor> {
      EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const ConstantData> from, Materialize(source));
      auto values = std::make_shared<std::vector<float>>(PlainValues(
          reinterpret_cast<const float*>(from->bytes.data()), rows, cols, transposed, alpha));
      return Tensor::View(DataType::kFloat32, shape, values->data(), values);
    };
    return g.AddConstant(name, ConstantData::Deferred(DataType::kFloat32, shape, 0, make));
  }
  const float* src = reinterpret_cast<const float*>(v.constant->bytes.data());
  return g.AddConstant(
      name, ConstantData::FromVector<float>(DataType::kFloat32, std::move(shape),
                                            PlainValues(src, rows, cols, transposed, alpha)));
}

// Gemm's C as a bias [N] (times beta), or -2 when C is not a constant row vector or scalar.
int GemmBias(IrGraph& g, const IrNode& n, int64_t cols, float beta) {
  if (n.inputs.size() < 3 || n.inputs[2] < 0) return -1;
  const int c = n.inputs[2];
  if (!IsFloatConstant(g, c)) return -2;
  const IrValue& v = ValueOf(g, c);
  const size_t count = v.constant->bytes.size() / sizeof(float);
  const bool row = IsBiasFor(g, c, cols);
  if (!row && count != 1) return -2;
  if (row && beta == 1.0f && v.shape.size() == 1) return c;
  const float* src = reinterpret_cast<const float*>(v.constant->bytes.data());
  std::vector<float> bias(static_cast<size_t>(cols));
  for (int64_t j = 0; j < cols; ++j) bias[static_cast<size_t>(j)] = beta * src[row ? j : 0];
  return g.AddConstant(v.name + "_bias", ConstantData::FromVector<float>(DataType::kFloat32, {cols},
                                                                         std::move(bias)));
}

float FloatAttr(const IrNode& n, std::string_view name, float fallback) {
  const IrAttribute* a = n.FindAttr(name);
  return a != nullptr && a->type == exec::AttrType::kFloat ? a->f : fallback;
}

// A FusedGemm/FusedConv's activation as its first post-op; false when it has none we know.
bool TakeFusedActivation(IrNode& n) {
  const IrAttribute* act = n.FindAttr(ops::kActivation);
  const IrAttribute* params = n.FindAttr(ops::kActivationParams);
  if (act == nullptr) return false;
  if (act->s == "Relu") {
    AppendPostOp(n, PostOpKind::kRelu, 0, 0);
  } else if (act->s == "Sigmoid") {
    AppendPostOp(n, PostOpKind::kSigmoid, 0, 0);
  } else if (act->s == "Clip" && params != nullptr && params->floats.size() == 2) {
    AppendPostOp(n, PostOpKind::kClip, params->floats[0], params->floats[1]);
  } else {
    return false;
  }
  n.RemoveAttr(ops::kActivation);
  n.RemoveAttr(ops::kActivationParams);
  return true;
}

}  // namespace

Result<PassStats> LowerMatMulsToDnnl(IrGraph& graph) {
  PassStats stats{"lower-matmul-dnnl", 0};
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    IrNode& n = graph.nodes[k];
    const bool gemm = IsOnnx(n, "Gemm") || n.IsOp(ops::kDomain, ops::kFusedGemm);
    if (!IsOnnx(n, "MatMul") && !gemm) continue;
    if (n.inputs.size() < 2 || n.outputs.size() != 1 || n.inputs[0] < 0) continue;
    if (!IsFloatConstant(graph, n.inputs[1]) || ValueOf(graph, n.inputs[1]).shape.size() != 2) {
      continue;
    }
    // A's shape may be unknown here (exporters compute shapes at run time); the kernel checks
    // its last dim against K on every run.
    const IrValue& a = ValueOf(graph, n.inputs[0]);
    if (a.dtype != DataType::kFloat32) continue;
    const bool trans_b = gemm && IntAttr(n, "transB", 0) != 0;
    const std::vector<int64_t> bs = ValueOf(graph, n.inputs[1]).shape;
    const int64_t kdim = trans_b ? bs[1] : bs[0];
    const int64_t ndim = trans_b ? bs[0] : bs[1];
    if (a.shape_known && (a.shape.empty() || (a.shape.back() >= 0 && a.shape.back() != kdim))) {
      continue;
    }
    int bias = -1;
    if (gemm) {
      if (IntAttr(n, "transA", 0) != 0 || (a.shape_known && a.shape.size() != 2)) continue;
      bias = GemmBias(graph, n, ndim, FloatAttr(n, "beta", 1.0f));
      if (bias == -2) continue;
      if (n.op_type == ops::kFusedGemm && !TakeFusedActivation(graph.nodes[k])) continue;
    }
    IrNode& m = graph.nodes[k];  // AddConstant may not move nodes, but keep it explicit
    const float alpha = gemm ? FloatAttr(m, "alpha", 1.0f) : 1.0f;
    const int b = PlainWeight(graph, m.inputs[1], trans_b, alpha);
    m.inputs = {m.inputs[0], b};
    if (bias >= 0) m.inputs.push_back(bias);
    for (std::string_view attr : {"transA", "transB", "alpha", "beta"}) m.RemoveAttr(attr);
    m.op_type = ops::kDnnlMatMul;
    m.domain = ops::kDomain;
    stats.changed++;
  }
  if (stats.changed > 0) graph.DeclareEpctxOpset();
  return stats;
}

namespace {

// The rank of a value (-1 when unknown): from its shape, or through its producer: a Transpose's
// perm, a matrix product (the larger operand rank), element-wise ops and Softmax (their
// operands' ranks, broadcast).
int RankOf(const IrGraph& g, int v, const std::vector<int>& producer, int depth = 0) {
  if (v < 0) return -1;
  const IrValue& x = ValueOf(g, v);
  if (x.shape_known) return static_cast<int>(x.shape.size());
  const int p = producer[static_cast<size_t>(v)];
  if (p < 0 || depth > 16) return -1;
  const IrNode& n = g.nodes[static_cast<size_t>(p)];
  if (IsOnnx(n, "Transpose")) {
    const IrAttribute* perm = n.FindAttr("perm");
    return perm != nullptr ? static_cast<int>(perm->ints.size()) : -1;
  }
  const bool matmul = IsOnnx(n, "MatMul") || (n.IsOp(ops::kDomain, ops::kDnnlBatchMatMul) &&
                                              n.FindAttr(ops::kOutPerm) == nullptr);
  const bool elementwise =
      n.domain.empty() &&
      (n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul" || n.op_type == "Div" ||
       n.op_type == "Softmax" || n.op_type == "Where" || n.op_type == "Relu" || n.op_type == "Exp");
  if (!matmul && !elementwise) return -1;
  int rank = -1;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const int i = n.inputs[k];
    if (i < 0) continue;
    // A folded Transpose still tells its operand's rank.
    const IrAttribute* perm = n.op_type == ops::kDnnlBatchMatMul && k < 2
                                  ? n.FindAttr(k == 0 ? ops::kAPerm : ops::kBPerm)
                                  : nullptr;
    const int r =
        perm != nullptr ? static_cast<int>(perm->ints.size()) : RankOf(g, i, producer, depth + 1);
    if (r < 0) return -1;  // an operand of unknown rank could broadcast the result up
    rank = std::max(rank, r);
  }
  return rank;
}

// A Transpose read only by node `user` (not a graph output): its perm, or empty.
std::vector<int64_t> SoleTransposePerm(const IrGraph& g, int v, const std::vector<int>& producer,
                                       const std::vector<int>& uses) {
  if (v < 0 || uses[static_cast<size_t>(v)] != 1 || IsGraphOutput(g, v)) return {};
  const int p = producer[static_cast<size_t>(v)];
  if (p < 0) return {};
  const IrNode& t = g.nodes[static_cast<size_t>(p)];
  if (!IsOnnx(t, "Transpose") || t.inputs.size() != 1 || t.outputs.size() != 1) return {};
  const IrAttribute* perm = t.FindAttr("perm");
  return perm != nullptr ? perm->ints : std::vector<int64_t>{};
}

}  // namespace

Result<PassStats> LowerBatchMatMulsToDnnl(IrGraph& graph) {
  PassStats stats{"lower-batch-matmul-dnnl", 0};
  std::vector<int> producer = Producers(graph);
  std::vector<int> uses = CountUses(graph);
  std::vector<bool> dead(graph.nodes.size(), false);
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    IrNode& n = graph.nodes[k];
    if (!IsOnnx(n, "MatMul") || n.inputs.size() != 2 || n.outputs.size() != 1) continue;
    const int a = n.inputs[0], b = n.inputs[1];
    if (a < 0 || b < 0 || ValueOf(graph, b).is_constant() ||
        ValueOf(graph, a).dtype != DataType::kFloat32 ||
        ValueOf(graph, b).dtype != DataType::kFloat32) {
      continue;
    }
    // oneDNN multiplies matrices of rank 2 and up; a 1-D operand stays on our MatMul.
    if (RankOf(graph, a, producer) < 2 || RankOf(graph, b, producer) < 2) continue;
    n.op_type = ops::kDnnlBatchMatMul;
    n.domain = ops::kDomain;
    // Transposes feeding it, or reordering its output, become strides of the matmul.
    for (int i = 0; i < 2; ++i) {
      const int v = n.inputs[static_cast<size_t>(i)];
      std::vector<int64_t> perm = SoleTransposePerm(graph, v, producer, uses);
      if (perm.empty()) continue;
      const size_t t = static_cast<size_t>(producer[static_cast<size_t>(v)]);
      n.inputs[static_cast<size_t>(i)] = graph.nodes[t].inputs[0];
      n.SetInts(i == 0 ? ops::kAPerm : ops::kBPerm, std::move(perm));
      dead[t] = true;
      stats.changed++;
    }
    const int y = n.outputs[0];
    if (uses[static_cast<size_t>(y)] == 1 && !IsGraphOutput(graph, y)) {
      for (size_t c = k + 1; c < graph.nodes.size(); ++c) {
        IrNode& t = graph.nodes[c];
        if (t.inputs.empty() || t.inputs[0] != y) continue;
        const IrAttribute* perm = t.FindAttr("perm");
        if (IsOnnx(t, "Transpose") && t.outputs.size() == 1 && perm != nullptr) {
          n.SetInts(ops::kOutPerm, perm->ints);
          n.outputs[0] = t.outputs[0];
          dead[c] = true;
          stats.changed++;
        }
        break;
      }
    }
    stats.changed++;
  }
  EraseNodes(graph, dead);
  if (stats.changed > 0) graph.DeclareEpctxOpset();
  return stats;
}

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
