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

// The node of `graph` that makes value `v`, -1 for a graph input, a constant or a capture.
int ProducerOf(const IrGraph& graph, int v) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (int o : graph.nodes[i].outputs) {
      if (o == v) return static_cast<int>(i);
    }
  }
  return -1;
}

// Cast (or CastLike) to the type its input already has.
bool IsSameTypeCast(const IrGraph& graph, const IrNode& n) {
  if (n.inputs.empty() || n.inputs[0] < 0) return false;
  const IrValue& in = ValueOf(graph, n.inputs[0]);
  if (!in.is_plain_tensor() || in.dtype == DataType::kUndefined) return false;
  if (n.op_type == "Cast") {
    const IrAttribute* to = n.FindAttr("to");
    return to != nullptr && to->type == exec::AttrType::kInt &&
           to->i == static_cast<int64_t>(in.dtype);
  }
  if (n.op_type == "CastLike" && n.inputs.size() > 1 && n.inputs[1] >= 0) {
    return ValueOf(graph, n.inputs[1]).dtype == in.dtype;
  }
  return false;
}

}  // namespace

Result<PassStats> EliminateIdentityLike(IrGraph& graph) {
  PassStats stats{"eliminate-identity", 0};
  std::vector<bool> dead(graph.nodes.size(), false);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    IrNode& n = graph.nodes[i];
    if (!n.domain.empty() || (n.op_type != "Identity" && n.op_type != "Dropout" &&
                              !IsZeroPad(graph, n) && !IsSameTypeCast(graph, n))) {
      continue;
    }
    if (n.inputs.empty() || n.inputs[0] < 0 || n.outputs.empty() || n.outputs[0] < 0) continue;
    if (n.op_type == "Dropout") {
      // Only inference-mode dropout with no mask output is the identity.
      if (n.outputs.size() > 1 && n.outputs[1] >= 0) continue;
      if (n.inputs.size() > 2 && n.inputs[2] >= 0) continue;  // training_mode given as input
    }
    const int out = n.outputs[0];
    const int in = n.inputs[0];
    if (IsGraphOutput(graph, out)) {
      // A graph output keeps its name: the node making the input makes the output instead (a
      // float16 model's last Cast would otherwise copy the logits), unless the input is a value
      // the graph gets or gives under its own name.
      const int producer = ProducerOf(graph, in);
      if (producer < 0 || IsGraphOutput(graph, in)) continue;
      for (int& o : graph.nodes[static_cast<size_t>(producer)].outputs) {
        if (o == in) o = out;
      }
      ReplaceUses(graph, in, out);
    } else {
      ReplaceUses(graph, out, in);
    }
    dead[i] = true;
    stats.changed++;
  }
  EraseNodes(graph, dead);
  return stats;
}

}  // namespace epctx::compile
