#include "compile/passes/passes.h"

namespace epctx::compile {

Result<PassStats> EliminateDeadNodes(IrGraph& graph) {
  PassStats stats{"eliminate-dead", 0};
  std::vector<int> uses = CountUses(graph);
  std::vector<bool> dead(graph.nodes.size(), false);
  // Backwards, so a chain of unused nodes goes in one sweep.
  for (size_t k = graph.nodes.size(); k-- > 0;) {
    const IrNode& n = graph.nodes[k];
    bool used = false;
    for (int o : n.outputs) {
      if (o >= 0 && uses[static_cast<size_t>(o)] > 0) used = true;
    }
    if (used) continue;
    dead[k] = true;
    stats.changed++;
    for (int i : n.inputs) {
      if (i >= 0) uses[static_cast<size_t>(i)]--;
    }
  }
  EraseNodes(graph, dead);
  return stats;
}

}  // namespace epctx::compile
