// Convolutions with constant float32 filters become com.epctx DnnlConv nodes (run by oneDNN),
// and the element-wise work that follows them becomes their post-ops.
#include <limits>

#include "compile/passes/passes.h"
#include "exec/kernels/dnnl/post_ops.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

using exec::kernels::onednn::PostOpKind;

bool IsOnnx(const IrNode& n, std::string_view op) {
  return n.domain.empty() && n.op_type == op;
}

void SetInts(IrNode& n, const std::string& name, std::vector<int64_t> v) {
  if (IrAttribute* a = n.FindAttr(name)) {
    a->type = exec::AttrType::kInts;
    a->ints = std::move(v);
    return;
  }
  IrAttribute a;
  a.name = name;
  a.type = exec::AttrType::kInts;
  a.ints = std::move(v);
  n.attrs.push_back(std::move(a));
}

void SetFloats(IrNode& n, const std::string& name, std::vector<float> v) {
  if (IrAttribute* a = n.FindAttr(name)) {
    a->type = exec::AttrType::kFloats;
    a->floats = std::move(v);
    return;
  }
  IrAttribute a;
  a.name = name;
  a.type = exec::AttrType::kFloats;
  a.floats = std::move(v);
  n.attrs.push_back(std::move(a));
}

void RemoveAttr(IrNode& n, std::string_view name) {
  std::erase_if(n.attrs, [&](const IrAttribute& a) { return a.name == name; });
}

void AppendPostOp(IrNode& n, PostOpKind kind, float alpha, float beta) {
  std::vector<int64_t> kinds;
  std::vector<float> alphas, betas;
  if (const IrAttribute* a = n.FindAttr("post_ops")) kinds = a->ints;
  if (const IrAttribute* a = n.FindAttr("post_op_alpha")) alphas = a->floats;
  if (const IrAttribute* a = n.FindAttr("post_op_beta")) betas = a->floats;
  kinds.push_back(static_cast<int64_t>(kind));
  alphas.push_back(alpha);
  betas.push_back(beta);
  SetInts(n, "post_ops", std::move(kinds));
  SetFloats(n, "post_op_alpha", std::move(alphas));
  SetFloats(n, "post_op_beta", std::move(betas));
}

bool HasPostOp(const IrNode& n, PostOpKind kind) {
  const IrAttribute* a = n.FindAttr("post_ops");
  if (a == nullptr) return false;
  for (int64_t k : a->ints) {
    if (k == static_cast<int64_t>(kind)) return true;
  }
  return false;
}

const IrValue& ValueOf(const IrGraph& g, int index) {
  return g.values[static_cast<size_t>(index)];
}

bool IsFloatConstant(const IrGraph& g, int index) {
  return index >= 0 && ValueOf(g, index).constant &&
         ValueOf(g, index).constant->dtype == DataType::kFloat32 &&
         ValueOf(g, index).constant->layout == 0;
}

// A scalar float constant, or false.
bool ScalarConstant(const IrGraph& g, int index, float* out) {
  if (index < 0) return false;
  const IrValue& v = ValueOf(g, index);
  if (!v.constant || v.constant->dtype != DataType::kFloat32 ||
      v.constant->bytes.size() != sizeof(float)) {
    return false;
  }
  *out = *reinterpret_cast<const float*>(v.constant->bytes.data());
  return true;
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

// One fusion into the node at `k` (a DnnlConv), or false when none applies.
bool FuseOne(IrGraph& g, size_t k, const Uses& uses, std::vector<bool>& dead) {
  IrNode& n = g.nodes[k];
  const int y = n.outputs[0];
  if (y < 0 || IsGraphOutput(g, y)) return false;
  const std::vector<int>& consumers = uses.consumers[static_cast<size_t>(y)];
  const IrValue& yv = ValueOf(g, y);

  // y * sigmoid(y): Swish (SiLU).
  if (uses.count[static_cast<size_t>(y)] == 2 && consumers.size() == 2) {
    for (int pick = 0; pick < 2; ++pick) {
      const int si = consumers[static_cast<size_t>(pick)];
      const int mi = consumers[static_cast<size_t>(1 - pick)];
      const IrNode& sig = g.nodes[static_cast<size_t>(si)];
      const IrNode& mul = g.nodes[static_cast<size_t>(mi)];
      if (dead[static_cast<size_t>(si)] || dead[static_cast<size_t>(mi)]) continue;
      if (!IsOnnx(sig, "Sigmoid") || !IsOnnx(mul, "Mul") || mul.inputs.size() != 2) continue;
      const int s = sig.outputs[0];
      if (s < 0 || uses.count[static_cast<size_t>(s)] != 1 || IsGraphOutput(g, s)) continue;
      if (!((mul.inputs[0] == y && mul.inputs[1] == s) ||
            (mul.inputs[0] == s && mul.inputs[1] == y))) {
        continue;
      }
      AppendPostOp(n, PostOpKind::kSwish, 1.0f, 0.0f);
      n.outputs[0] = mul.outputs[0];
      // The fused node takes the Mul's place, after both.
      g.nodes[static_cast<size_t>(mi)] = std::move(n);
      dead[k] = true;
      dead[static_cast<size_t>(si)] = true;
      return true;
    }
  }
  if (uses.count[static_cast<size_t>(y)] != 1 || consumers.size() != 1) return false;
  const size_t c = static_cast<size_t>(consumers[0]);
  if (dead[c]) return false;
  IrNode& next = g.nodes[c];
  PostOpKind kind;
  float alpha = 0, beta = 0;
  if (next.inputs[0] == y && ActivationPostOp(g, next, &kind, &alpha, &beta)) {
    AppendPostOp(n, kind, alpha, beta);
    n.outputs[0] = next.outputs[0];
    dead[c] = true;
    return true;
  }
  // y + r with r of y's exact shape: the residual of ResNet-style blocks.
  if (IsOnnx(next, "Add") && next.inputs.size() == 2 && next.outputs.size() == 1 &&
      !HasPostOp(n, PostOpKind::kAddTensor) && n.inputs.size() <= 3) {
    const int r = next.inputs[0] == y ? next.inputs[1] : next.inputs[0];
    if (r == y || r < 0) return false;
    const IrValue& rv = ValueOf(g, r);
    if (!yv.fully_static() || !rv.fully_static() || rv.shape != yv.shape ||
        rv.dtype != DataType::kFloat32) {
      return false;
    }
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
    const bool fused = n.domain == "com.epctx" && n.op_type == "FusedConv";
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
      const IrAttribute* act = n.FindAttr("activation");
      const IrAttribute* params = n.FindAttr("activation_params");
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
      RemoveAttr(n, "activation");
      RemoveAttr(n, "activation_params");
    }
    if (n.FindAttr("kernel_shape") == nullptr) {
      SetInts(n, "kernel_shape", std::vector<int64_t>(w.shape.begin() + 2, w.shape.end()));
    }
    n.op_type = "DnnlConv";
    n.domain = "com.epctx";
    stats.changed++;
  }
  if (stats.changed > 0) graph.opsets["com.epctx"] = 1;
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
      if (n.domain != "com.epctx" || n.op_type != "DnnlConv" || n.outputs.size() != 1) continue;
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
