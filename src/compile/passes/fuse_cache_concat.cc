// A decode step's cache update, present = Concat(past, new) on the sequence axis, read by the
// com.epctx Attention that FuseAttention made, moves into that Attention: it takes the new rows
// and the past (inputs 1, 2 and 4, 5) and makes the presents (outputs 1, 2). A one-row step then
// copies each past block into the present just before it reads it (GroupQueryAttention's core,
// assemble_caches), so that the past is read from memory once: the Concat wrote a present of
// every layer and the attention read it back (SmolLM-shaped float32 decode at a past of 1024:
// Concat 4.7 ms and attention 1.9 ms of a 25.8 ms step, one thread). A Shape of a present read
// before the Attention (the export sizes its mask from it) becomes Shape(past) + [0, 0, T, 0].
#include "compile/passes/passes.h"
#include "exec/kernels/epctx_ops.h"

namespace epctx::compile {
namespace {

// The Concat of two rank-4 float32 values on axis 2 (or -2) that produces `v`, or -1.
int CacheConcat(const IrGraph& graph, const std::vector<int>& producers, int v) {
  if (v < 0) return -1;
  const int p = producers[static_cast<size_t>(v)];
  if (p < 0) return -1;
  const IrNode& n = graph.nodes[static_cast<size_t>(p)];
  if (!n.domain.empty() || n.op_type != "Concat" || n.inputs.size() != 2 || n.outputs.size() != 1) {
    return -1;
  }
  const IrAttribute* axis = n.FindAttr("axis");
  if (axis == nullptr || (axis->i != 2 && axis->i != -2)) return -1;
  for (int in : {n.inputs[0], n.inputs[1], v}) {
    if (in < 0) return -1;
    const IrValue& x = ValueOf(graph, in);
    if (!x.is_plain_tensor() || x.dtype != DataType::kFloat32 || x.is_constant()) return -1;
    if (!x.shape_known || x.shape.size() != 4) return -1;
  }
  return p;
}

bool IsWholeShape(const IrNode& n) {
  return n.domain.empty() && n.op_type == "Shape" && n.outputs.size() == 1 &&
         n.FindAttr("start") == nullptr && n.FindAttr("end") == nullptr;
}

int AddShapeValue(IrGraph& graph, const std::string& name) {
  IrValue v;
  v.name = graph.UniqueName(name);
  v.dtype = DataType::kInt64;
  v.shape_known = true;
  v.shape = {4};
  v.dim_names = {""};
  return graph.AddValue(std::move(v));
}

}  // namespace

Result<PassStats> FuseCacheConcatIntoAttention(IrGraph& graph) {
  PassStats stats{"fuse-cache-concat", 0};
  for (const IrNode& n : graph.nodes) {
    // Bodies may read outer values without naming them.
    if (n.has_bodies()) return stats;
  }
  const std::vector<int> producers = Producers(graph);
  std::vector<bool> dead(graph.nodes.size(), false);
  // Shape nodes to replace: (node index, past value, new value).
  std::vector<std::tuple<size_t, int, int>> shapes;
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    IrNode& n = graph.nodes[k];
    if (!n.IsOp(ops::kDomain, ops::kAttention) || n.inputs.size() < 3 || n.inputs.size() > 4 ||
        n.outputs.size() != 1) {
      continue;
    }
    const int present_k = n.inputs[1], present_v = n.inputs[2];
    if (present_k == present_v) continue;
    const int ck = CacheConcat(graph, producers, present_k);
    const int cv = CacheConcat(graph, producers, present_v);
    if (ck < 0 || cv < 0 || dead[static_cast<size_t>(ck)] || dead[static_cast<size_t>(cv)]) {
      continue;
    }
    // The presents are made by the Attention now: before it, only whole Shapes may read them.
    bool early_reader = false;
    std::vector<std::tuple<size_t, int, int>> early_shapes;
    for (size_t r = 0; r < k; ++r) {
      for (int i : graph.nodes[r].inputs) {
        if (i != present_k && i != present_v) continue;
        const IrNode& concat = graph.nodes[static_cast<size_t>(i == present_k ? ck : cv)];
        if (IsWholeShape(graph.nodes[r]) && !dead[r]) {
          early_shapes.emplace_back(r, concat.inputs[0], concat.inputs[1]);
        } else {
          early_reader = true;
        }
      }
    }
    if (early_reader) continue;
    const IrNode& concat_k = graph.nodes[static_cast<size_t>(ck)];
    const IrNode& concat_v = graph.nodes[static_cast<size_t>(cv)];
    const int mask = n.inputs.size() > 3 ? n.inputs[3] : -1;
    n.inputs = {n.inputs[0], concat_k.inputs[1], concat_v.inputs[1],
                mask,        concat_k.inputs[0], concat_v.inputs[0]};
    n.outputs = {n.outputs[0], present_k, present_v};
    dead[static_cast<size_t>(ck)] = dead[static_cast<size_t>(cv)] = true;
    for (auto& s : early_shapes) {
      dead[std::get<0>(s)] = true;
      shapes.push_back(s);
    }
    stats.changed++;
  }
  if (stats.changed == 0) return stats;
  // Each replaced Shape: Shape(past) + Shape(new) * [0, 0, 1, 0], where the Shape was.
  const int axis_only =
      graph.AddConstant(graph.UniqueName("cache_rows_axis"),
                        ConstantData::FromVector<int64_t>(DataType::kInt64, {4}, {0, 0, 1, 0}));
  std::vector<IrNode> nodes;
  nodes.reserve(graph.nodes.size() + 3 * shapes.size());
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    for (const auto& [at, past, now] : shapes) {
      if (at != k) continue;
      const std::string base = graph.nodes[k].name;
      const int out = graph.nodes[k].outputs[0];
      const int past_shape = AddShapeValue(graph, base + "_past");
      const int new_shape = AddShapeValue(graph, base + "_new");
      const int new_rows = AddShapeValue(graph, base + "_new_rows");
      nodes.push_back(MakeNode(graph.UniqueName(base + "_past"), "Shape", "", {past}, past_shape));
      nodes.push_back(MakeNode(graph.UniqueName(base + "_new"), "Shape", "", {now}, new_shape));
      nodes.push_back(
          MakeNode(graph.UniqueName(base + "_rows"), "Mul", "", {new_shape, axis_only}, new_rows));
      nodes.push_back(
          MakeNode(graph.UniqueName(base + "_sum"), "Add", "", {past_shape, new_rows}, out));
    }
    if (!dead[k]) nodes.push_back(std::move(graph.nodes[k]));
  }
  graph.nodes = std::move(nodes);
  return stats;
}

}  // namespace epctx::compile
