#include "compile/unknown_operators.h"

#include <fmt/format.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <vector>

#include "compile/kernel_check.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

struct Refusals {
  std::map<std::string, int64_t> opsets;  // of the model's ONNX domains
  std::vector<std::string> lines;
  size_t count = 0;
};

void CollectUnknown(const onnx::GraphProto& graph, Refusals& r) {
  for (const onnx::NodeProto& node : graph.node()) {
    const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    auto opset = r.opsets.find(domain);
    if (opset != r.opsets.end() &&
        onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset->second), domain) ==
            nullptr) {
      if (++r.count <= kMaxListedNodes) {
        const std::string op = domain.empty() ? node.op_type() : domain + "." + node.op_type();
        r.lines.push_back(fmt::format(
            "operator {} (opset {}) is not supported (node '{}'): no kernel runs it, and the "
            "onnx library this build reads models with does not know it either",
            op, opset->second, node.name()));
      }
    }
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.has_g()) CollectUnknown(a.g(), r);
      for (const onnx::GraphProto& g : a.graphs()) CollectUnknown(g, r);
    }
  }
}

}  // namespace

Status RefuseUnknownOnnxOperators(const onnx::ModelProto& model, const std::string& name) {
  Refusals r;
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
    const std::string domain = id.domain() == "ai.onnx" ? "" : id.domain();
    if (domain.empty() || domain == "ai.onnx.ml") r.opsets[domain] = id.version();
  }
  CollectUnknown(model.graph(), r);
  return RefuseNodes(name, r.lines, r.count);
}

}  // namespace epctx::compile
