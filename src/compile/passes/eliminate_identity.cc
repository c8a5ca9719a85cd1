#include <algorithm>

#include "compile/passes/passes.h"

namespace epctx::compile {
namespace {

// Pad whose pads are all zero (a constant input, or the attribute before opset 11): exporters
// write it before pooling layers that count no padding.
bool IsZeroPad(const IrGraph& graph, const IrNode& n) {
  if (n.op_type != "Pad") return false;
  if (const IrAttribute* a = n.FindAttr("pads")) {
    return std::all_of(a->ints.begin(), a->ints.end(), [](int64_t p) { return p == 0; });
  }
  if (n.inputs.size() < 2 || n.inputs[1] < 0) return false;
  const IrValue& pads = graph.values[static_cast<size_t>(n.inputs[1])];
  if (!pads.constant || pads.constant->dtype != DataType::kInt64) return false;
  const auto* p = reinterpret_cast<const int64_t*>(pads.constant->bytes.data());
  return std::all_of(p, p + pads.constant->bytes.size() / sizeof(int64_t),
                     [](int64_t v) { return v == 0; });
}

}  // namespace

Result<PassStats> EliminateIdentityLike(IrGraph& graph) {
  PassStats stats{"eliminate-identity", 0};
  std::vector<bool> dead(graph.nodes.size(), false);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    IrNode& n = graph.nodes[i];
    if (!n.domain.empty() ||
        (n.op_type != "Identity" && n.op_type != "Dropout" && !IsZeroPad(graph, n))) {
      continue;
    }
    if (n.inputs.empty() || n.inputs[0] < 0 || n.outputs.empty() || n.outputs[0] < 0) continue;
    if (n.op_type == "Dropout") {
      // Only inference-mode dropout with no mask output is the identity.
      if (n.outputs.size() > 1 && n.outputs[1] >= 0) continue;
      if (n.inputs.size() > 2 && n.inputs[2] >= 0) continue;  // training_mode given as input
    }
    int out = n.outputs[0];
    // A graph output keeps its name, so the node that defines it stays.
    if (IsGraphOutput(graph, out)) continue;
    ReplaceUses(graph, out, n.inputs[0]);
    dead[i] = true;
    stats.changed++;
  }
  EraseNodes(graph, dead);
  return stats;
}

}  // namespace epctx::compile
