#include "compile/kernel_check.h"

#include <vector>

#include "exec/kernel.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

void Collect(const IrGraph& graph, std::vector<std::string>& refused, size_t& count) {
  for (const IrNode& n : graph.nodes) {
    const std::string op = n.domain.empty() ? n.op_type : n.domain + "." + n.op_type;
    if (n.has_bodies()) {
      // Control-flow kernels bind their bodies when made, which needs a blob: their bodies'
      // nodes are checked instead, and the op itself for a kernel.
      if (!exec::KernelRegistry::Global().Supports(n.domain, n.op_type, graph.OpsetOf(n.domain))) {
        if (++count <= kMaxListedNodes) {
          refused.push_back(fmt::format("operator {} (opset {}) is not supported (node '{}')", op,
                                        graph.OpsetOf(n.domain), n.name));
        }
      }
      for (const IrAttribute& a : n.attrs) {
        if (a.body) Collect(*a.body, refused, count);
      }
      continue;
    }
    exec::Attributes attrs = graph.AttributesOf(n);
    std::vector<Tensor> views;
    auto kernel = exec::KernelRegistry::Global().Create(graph.NodeInfoOf(n, attrs, views));
    if (kernel.ok()) continue;
    // The registry's message names the op and the node.
    if (++count <= kMaxListedNodes) refused.push_back(kernel.status().message());
  }
}

}  // namespace

Status CheckEveryNodeRuns(const IrGraph& graph, const std::string& model) {
  std::vector<std::string> refused;
  size_t count = 0;
  Collect(graph, refused, count);
  return RefuseNodes(model, refused, count);
}

Status RefuseNodes(const std::string& model, const std::vector<std::string>& lines, size_t count) {
  if (count == 0) return Status::Ok();
  std::string list;
  for (const std::string& line : lines) list += "\n  " + line;
  if (count > lines.size()) list += fmt::format("\n  ... and {} more", count - lines.size());
  return EPCTX_ERROR(kUnsupported, "'{}': {} node{} no kernel of this engine runs:{}", model, count,
                     count == 1 ? "" : "s", list);
}

}  // namespace epctx::compile
