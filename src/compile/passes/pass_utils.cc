#include <algorithm>
#include <cstring>

#include "compile/passes/passes.h"

namespace epctx::compile {

bool ProvablySameShape(const IrValue& a, const IrValue& b) {
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

bool ScalarConstant(const IrGraph& graph, int index, float* out) {
  if (index < 0) return false;
  const IrValue& v = ValueOf(graph, index);
  if (!v.constant || v.constant->dtype != DataType::kFloat32 ||
      v.constant->bytes.size() != sizeof(float)) {
    return false;
  }
  std::memcpy(out, v.constant->bytes.data(), sizeof(float));
  return true;
}

std::vector<int64_t> IntsOf(const IrGraph& graph, const IrNode& n, std::string_view attr,
                            size_t input) {
  if (const IrAttribute* a = n.FindAttr(attr)) return a->ints;
  if (input < n.inputs.size() && n.inputs[input] >= 0) {
    return Int64Values(ValueOf(graph, n.inputs[input]));
  }
  return {};
}

std::vector<int64_t> Int64Values(const IrValue& v) {
  if (!v.constant || v.constant->dtype != DataType::kInt64) return {};
  std::vector<int64_t> out(v.constant->bytes.size() / sizeof(int64_t));
  std::memcpy(out.data(), v.constant->bytes.data(), out.size() * sizeof(int64_t));
  return out;
}

void ReplaceUses(IrGraph& graph, int from, int to) {
  for (IrNode& n : graph.nodes) {
    for (int& i : n.inputs) {
      if (i == from) i = to;
    }
  }
}

void EraseNodes(IrGraph& graph, const std::vector<bool>& dead) {
  size_t out = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!dead[i]) {
      if (out != i) graph.nodes[out] = std::move(graph.nodes[i]);
      ++out;
    }
  }
  graph.nodes.resize(out);
}

ChainMatcher::ChainMatcher(IrGraph& graph)
    : g_(graph),
      uses_(CountUses(graph)),
      producer_(Producers(graph)),
      dead_(graph.nodes.size(), false) {}

int ChainMatcher::SoleProducer(int v, std::string_view op) const {
  if (v < 0 || uses_[static_cast<size_t>(v)] != 1 || IsGraphOutput(g_, v)) return -1;
  const int p = producer_[static_cast<size_t>(v)];
  if (p < 0 || dead_[static_cast<size_t>(p)]) return -1;
  const IrNode& n = g_.nodes[static_cast<size_t>(p)];
  if (!n.domain.empty() || n.op_type != op || n.outputs.size() != 1) return -1;
  return p;
}

bool IsGraphOutput(const IrGraph& graph, int value) {
  return std::find(graph.outputs.begin(), graph.outputs.end(), value) != graph.outputs.end();
}

IrNode MakeNode(const std::string& name, std::string_view op, std::string_view domain,
                std::vector<int> inputs, int output) {
  IrNode n;
  n.name = name;
  n.op_type = op;
  n.domain = domain;
  n.inputs = std::move(inputs);
  n.outputs = {output};
  return n;
}

}  // namespace epctx::compile
