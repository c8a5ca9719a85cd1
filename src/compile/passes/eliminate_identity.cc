#include "compile/passes/passes.h"

namespace epctx::compile {

Result<PassStats> EliminateIdentityLike(IrGraph& graph) {
  PassStats stats{"eliminate-identity", 0};
  std::vector<bool> dead(graph.nodes.size(), false);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    IrNode& n = graph.nodes[i];
    if (!n.domain.empty() || (n.op_type != "Identity" && n.op_type != "Dropout")) continue;
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
