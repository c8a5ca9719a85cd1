#include <algorithm>
#include <set>

#include "compile/passes/passes.h"
#include "exec/kernel.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

// A folded value larger than this stays a computation: storing it would bloat the blob.
constexpr size_t kMaxFoldedBytes = 64ull << 20;

bool IsNondeterministic(const IrNode& n) {
  static const std::set<std::string> kOps = {"RandomNormal",  "RandomNormalLike",
                                             "RandomUniform", "RandomUniformLike",
                                             "Multinomial",   "Bernoulli"};
  if (!n.domain.empty()) return false;
  // Training-mode Dropout without a seed draws differently every run.
  if (n.op_type == "Dropout" && n.inputs.size() > 2 && n.inputs[2] >= 0 && !n.FindAttr("seed")) {
    return true;
  }
  return kOps.count(n.op_type) > 0;
}

// The dims [*start, *end) of a rank-`rank` value that Shape node `n` gives (Shape-15's start and
// end, negative ones from the end, clamped).
void ShapeRange(const IrNode& n, int64_t rank, int64_t* start, int64_t* end) {
  *start = 0;
  *end = rank;
  if (const IrAttribute* a = n.FindAttr("start")) *start = a->i;
  if (const IrAttribute* a = n.FindAttr("end")) *end = a->i;
  if (*start < 0) *start += rank;
  if (*end < 0) *end += rank;
  *start = std::clamp<int64_t>(*start, 0, rank);
  *end = std::clamp<int64_t>(*end, *start, rank);
}

// Shape of a statically shaped value.
std::shared_ptr<ConstantData> FoldShape(const IrNode& n, const IrValue& input) {
  int64_t start = 0, end = 0;
  ShapeRange(n, static_cast<int64_t>(input.shape.size()), &start, &end);
  std::vector<int64_t> dims(input.shape.begin() + start, input.shape.begin() + end);
  int64_t count = static_cast<int64_t>(dims.size());
  return ConstantData::FromVector<int64_t>(DataType::kInt64, {count}, std::move(dims));
}

// Gather(Shape(x), indices) when every dim it picks is static in x, though others are not (a
// batch or sequence length): a Llama export reads the head size and the new rows' count that way
// in every layer. Null when it does not apply. `shape` is the Shape node, `gather` the Gather.
std::shared_ptr<ConstantData> FoldStaticDims(const IrGraph& graph, const IrNode& shape,
                                             const IrNode& gather) {
  const IrValue& x = ValueOf(graph, shape.inputs[0]);
  if (!x.shape_known || gather.inputs.size() != 2 || gather.inputs[1] < 0) return nullptr;
  const IrAttribute* axis = gather.FindAttr("axis");
  if (axis != nullptr && axis->i != 0 && axis->i != -1) return nullptr;
  const IrValue& indices = ValueOf(graph, gather.inputs[1]);
  const std::vector<int64_t> picked = Int64Values(indices);
  if (picked.empty() || indices.constant->shape.size() > 1) return nullptr;
  int64_t start = 0, end = 0;
  ShapeRange(shape, static_cast<int64_t>(x.shape.size()), &start, &end);
  const int64_t count = end - start;
  std::vector<int64_t> dims;
  for (int64_t i : picked) {
    if (i < 0) i += count;
    if (i < 0 || i >= count) return nullptr;  // the run reports it
    const int64_t d = x.shape[static_cast<size_t>(start + i)];
    if (d < 0) return nullptr;
    dims.push_back(d);
  }
  return ConstantData::FromVector<int64_t>(DataType::kInt64, indices.constant->shape,
                                           std::move(dims));
}

std::shared_ptr<ConstantData> FoldSize(const IrValue& input) {
  int64_t count = 1;
  for (int64_t d : input.shape) count *= d;
  return ConstantData::FromVector<int64_t>(DataType::kInt64, {}, {count});
}

// Makes value `v` the constant `data`.
void MakeConstant(IrValue& v, std::shared_ptr<ConstantData> data) {
  v.constant = std::move(data);
  v.dtype = v.constant->dtype;
  v.shape_known = true;
  v.shape = v.constant->shape;
  v.dim_names.assign(v.shape.size(), "");
}

}  // namespace

Result<PassStats> FoldConstants(IrGraph& graph) {
  PassStats stats{"fold-constants", 0};
  std::vector<bool> dead(graph.nodes.size(), false);
  const std::vector<int> producer = Producers(graph);
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    const IrNode& n = graph.nodes[k];
    // Bodies are bound only when a program is loaded, so control flow is not folded.
    if (n.outputs.empty() || IsNondeterministic(n) || n.has_bodies()) continue;

    if (n.domain.empty() && n.op_type == "Gather" && n.outputs.size() == 1 && n.outputs[0] >= 0 &&
        !n.inputs.empty() && n.inputs[0] >= 0) {
      const int p = producer[static_cast<size_t>(n.inputs[0])];
      const IrNode* shape = p >= 0 ? &graph.nodes[static_cast<size_t>(p)] : nullptr;
      if (shape != nullptr && shape->domain.empty() && shape->op_type == "Shape" &&
          shape->inputs.size() == 1 && shape->inputs[0] >= 0) {
        if (auto data = FoldStaticDims(graph, *shape, n)) {
          MakeConstant(graph.values[static_cast<size_t>(n.outputs[0])], std::move(data));
          dead[k] = true;
          stats.changed++;
          continue;
        }
      }
    }

    if (n.domain.empty() && (n.op_type == "Shape" || n.op_type == "Size") && n.inputs.size() == 1 &&
        n.inputs[0] >= 0 && graph.values[static_cast<size_t>(n.inputs[0])].fully_static() &&
        n.outputs[0] >= 0) {
      const IrValue& in = graph.values[static_cast<size_t>(n.inputs[0])];
      MakeConstant(graph.values[static_cast<size_t>(n.outputs[0])],
                   n.op_type == "Shape" ? FoldShape(n, in) : FoldSize(in));
      dead[k] = true;
      stats.changed++;
      continue;
    }

    bool all_constant = true;
    bool any_input = false;
    for (int i : n.inputs) {
      if (i < 0) continue;
      any_input = true;
      const IrValue& v = graph.values[static_cast<size_t>(i)];
      // A deferred constant has no bytes until the blob is written.
      if (!v.is_constant() || v.constant->deferred()) all_constant = false;
    }
    if (!all_constant || !any_input) continue;
    // Only numeric tensors can become weights.
    bool numeric_outputs = true;
    for (int o : n.outputs) {
      if (o < 0) continue;
      const IrValue& v = graph.values[static_cast<size_t>(o)];
      if (!v.is_plain_tensor() || v.dtype == DataType::kString) numeric_outputs = false;
    }
    if (!numeric_outputs) continue;
    if (!exec::KernelRegistry::Global().Supports(n.domain, n.op_type, graph.OpsetOf(n.domain))) {
      continue;
    }

    exec::Attributes attrs = graph.AttributesOf(n);
    std::vector<Tensor> views;
    exec::NodeInfo info = graph.NodeInfoOf(n, attrs, views);
    std::vector<Tensor> inputs;
    for (int i : n.inputs) {
      inputs.push_back(i < 0 ? Tensor()
                             : graph.values[static_cast<size_t>(i)].constant->AsTensor());
    }
    std::vector<const Tensor*> input_ptrs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      input_ptrs.push_back(n.inputs[i] < 0 ? nullptr : &inputs[i]);
    }
    auto outputs = exec::RunNodeOnce(info, input_ptrs);
    if (!outputs.ok()) {
      // Not fatal: the node stays and the same error will surface when the program runs.
      Logger().debug("constant folding skipped node '{}': {}", n.name, outputs.status().ToString());
      continue;
    }
    bool not_a_weight = false;
    for (const Tensor& t : *outputs) {
      if (t.byte_size() > kMaxFoldedBytes || !t.is_tensor() || t.dtype() == DataType::kString) {
        not_a_weight = true;
      }
    }
    if (not_a_weight) continue;
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      if (n.outputs[o] < 0 || o >= outputs->size() || (*outputs)[o].empty()) continue;
      MakeConstant(graph.values[static_cast<size_t>(n.outputs[o])],
                   ConstantData::FromTensor((*outputs)[o]));
    }
    dead[k] = true;
    stats.changed++;
  }
  EraseNodes(graph, dead);
  return stats;
}

}  // namespace epctx::compile
