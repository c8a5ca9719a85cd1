#include <limits>

#include "compile/passes/passes.h"
#include "exec/kernels/epctx_ops.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

// The activation a node applies, as FusedConv/FusedGemm attributes; false when not fusable.
bool DescribeActivation(const IrGraph& g, const IrNode& act, std::string* name,
                        std::vector<float>* params) {
  if (!act.domain.empty() || act.inputs.empty() || act.outputs.size() != 1) return false;
  if (act.op_type == "Relu" || act.op_type == "Sigmoid") {
    *name = act.op_type;
    params->clear();
    return true;
  }
  if (act.op_type != "Clip") return false;
  float lo = std::numeric_limits<float>::lowest();
  float hi = std::numeric_limits<float>::max();
  if (g.OpsetOf("") < 11) {
    if (const IrAttribute* a = act.FindAttr("min")) lo = a->f;
    if (const IrAttribute* a = act.FindAttr("max")) hi = a->f;
  } else {
    for (size_t k = 1; k < act.inputs.size() && k < 3; ++k) {
      int idx = act.inputs[k];
      if (idx < 0) continue;
      const IrValue& v = g.values[static_cast<size_t>(idx)];
      if (!v.constant || v.constant->dtype != DataType::kFloat32 ||
          v.constant->bytes.size() != sizeof(float)) {
        return false;  // bounds computed at run time
      }
      float bound = *reinterpret_cast<const float*>(v.constant->bytes.data());
      (k == 1 ? lo : hi) = bound;
    }
  }
  *name = "Clip";
  *params = {lo, hi};
  return true;
}

}  // namespace

Result<PassStats> FuseActivations(IrGraph& graph) {
  PassStats stats{"fuse-activation", 0};
  std::vector<int> uses = CountUses(graph);
  std::vector<int> consumer(graph.values.size(), -1);
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    for (int i : graph.nodes[k].inputs) {
      if (i >= 0) consumer[static_cast<size_t>(i)] = static_cast<int>(k);
    }
  }
  std::vector<bool> dead(graph.nodes.size(), false);
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    IrNode& n = graph.nodes[k];
    if (!n.domain.empty() || (n.op_type != "Conv" && n.op_type != "Gemm")) continue;
    if (n.outputs.size() != 1 || n.outputs[0] < 0) continue;
    int out = n.outputs[0];
    if (uses[static_cast<size_t>(out)] != 1 || IsGraphOutput(graph, out)) continue;
    int c = consumer[static_cast<size_t>(out)];
    if (c < 0 || dead[static_cast<size_t>(c)]) continue;
    const IrNode& act = graph.nodes[static_cast<size_t>(c)];
    if (act.inputs[0] != out) continue;
    const IrValue& y = graph.values[static_cast<size_t>(out)];
    if (y.dtype != DataType::kFloat32) continue;
    std::string name;
    std::vector<float> params;
    if (!DescribeActivation(graph, act, &name, &params)) continue;

    n.op_type = n.op_type == "Conv" ? ops::kFusedConv : ops::kFusedGemm;
    n.domain = ops::kDomain;
    IrAttribute a;
    a.name = ops::kActivation;
    a.type = exec::AttrType::kString;
    a.s = name;
    n.attrs.push_back(a);
    IrAttribute p;
    p.name = ops::kActivationParams;
    p.type = exec::AttrType::kFloats;
    p.floats = params;
    n.attrs.push_back(p);
    n.outputs[0] = act.outputs[0];
    dead[static_cast<size_t>(c)] = true;
    stats.changed++;
  }
  if (stats.changed > 0) graph.DeclareEpctxOpset();
  EraseNodes(graph, dead);
  return stats;
}

}  // namespace epctx::compile
