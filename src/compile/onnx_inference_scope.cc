#include "compile/onnx_inference_scope.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <unordered_set>

namespace epctx::compile {
namespace {

std::string DomainOf(const onnx::NodeProto& node) {
  return node.domain() == "ai.onnx" ? std::string() : node.domain();
}

bool KnownToOnnx(const onnx::ModelProto& model, const onnx::NodeProto& node) {
  const std::string domain = DomainOf(node);
  for (const auto& opset : model.opset_import()) {
    const std::string imported = opset.domain() == "ai.onnx" ? std::string() : opset.domain();
    if (imported != domain) continue;
    return onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset.version()),
                                          domain) != nullptr;
  }
  return false;
}

// Every name the node reads, its bodies' reads of enclosing values included.
void CollectReads(const onnx::NodeProto& node, std::vector<const std::string*>& out) {
  for (const std::string& in : node.input()) {
    if (!in.empty()) out.push_back(&in);
  }
  for (const auto& a : node.attribute()) {
    std::vector<const onnx::GraphProto*> bodies;
    if (a.has_g()) bodies.push_back(&a.g());
    for (const auto& g : a.graphs()) bodies.push_back(&g);
    for (const onnx::GraphProto* body : bodies) {
      for (const auto& inner : body->node()) CollectReads(inner, out);
    }
  }
}

}  // namespace

OnnxInferenceScope::OnnxInferenceScope(onnx::ModelProto& model) : model_(model) {
  if (model.has_graph()) Narrow(*model.mutable_graph());
}

void OnnxInferenceScope::Narrow(onnx::GraphProto& graph) {
  std::unordered_set<std::string> tainted;  // values made by nodes set aside
  auto* nodes = graph.mutable_node();
  std::vector<onnx::NodeProto*> all;
  all.reserve(static_cast<size_t>(nodes->size()));
  while (!nodes->empty()) all.push_back(nodes->ReleaseLast());
  std::reverse(all.begin(), all.end());
  bool narrowed = false;
  for (onnx::NodeProto* node : all) {
    bool keep = KnownToOnnx(model_, *node);
    if (!keep && first_unknown_op_.empty()) {
      first_unknown_op_ =
          DomainOf(*node).empty() ? node->op_type() : DomainOf(*node) + "." + node->op_type();
    }
    if (keep && !tainted.empty()) {
      std::vector<const std::string*> reads;
      CollectReads(*node, reads);
      keep = std::none_of(reads.begin(), reads.end(),
                          [&](const std::string* r) { return tainted.count(*r) != 0; });
    }
    if (!keep) {
      for (const std::string& out : node->output()) {
        if (!out.empty()) tainted.insert(out);
      }
      narrowed = true;
      ++set_aside_;
      continue;
    }
    nodes->AddAllocated(node);
    for (auto& a : *node->mutable_attribute()) {
      if (a.has_g()) Narrow(*a.mutable_g());
      for (auto& g : *a.mutable_graphs()) Narrow(g);
    }
  }
  if (narrowed) {
    held_.push_back({&graph, std::move(all)});
  }
}

OnnxInferenceScope::~OnnxInferenceScope() {
  // Each graph's list is rebuilt on its own: a body's nodes never move between graphs.
  for (auto it = held_.rbegin(); it != held_.rend(); ++it) {
    auto* nodes = it->graph->mutable_node();
    while (!nodes->empty()) (void)nodes->ReleaseLast();  // each is also in it->nodes
    for (onnx::NodeProto* node : it->nodes) nodes->AddAllocated(node);
  }
}

}  // namespace epctx::compile
