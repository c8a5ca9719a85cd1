#include "compile/onnx_precheck.h"

#include <onnx/onnx_pb.h>

#include <climits>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status_macros.h"

namespace epctx::compile {
namespace {

using FunctionKey = std::pair<std::string, std::string>;  // (domain, name)

bool IsOnnxDomain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

bool OneOf(std::string_view op, std::initializer_list<std::string_view> ops) {
  for (std::string_view o : ops) {
    if (op == o) return true;
  }
  return false;
}

// Every value of integer attribute `attr` (INT or INTS) lies in [1, INT32_MAX].
Status CheckPositive(const onnx::NodeProto& node, const std::string& label,
                     const onnx::AttributeProto& a, const std::string& where) {
  auto bad = [&](int64_t v) -> Status {
    return EPCTX_ERROR(kInvalidArgument,
                       "{}: node '{}' ({}): attribute '{}' has {}; it must be from 1 to {}", where,
                       label, node.op_type(), a.name(), v, INT32_MAX);
  };
  if (a.type() == onnx::AttributeProto::INT && (a.i() < 1 || a.i() > INT32_MAX)) return bad(a.i());
  for (int64_t v : a.ints()) {
    if (v < 1 || v > INT32_MAX) return bad(v);
  }
  return Status::Ok();
}

Status CheckNode(const onnx::NodeProto& node, const std::string& label, const std::string& where) {
  if (!IsOnnxDomain(node.domain())) return Status::Ok();
  const std::string& op = node.op_type();
  const bool windowed = OneOf(op, {"Conv", "ConvInteger", "QLinearConv", "ConvTranspose", "MaxPool",
                                   "AveragePool", "LpPool", "MaxUnpool"});
  const bool blocked = OneOf(op, {"DepthToSpace", "SpaceToDepth"});
  if (!windowed && !blocked) return Status::Ok();
  for (const onnx::AttributeProto& a : node.attribute()) {
    const bool divisor = windowed ? OneOf(a.name(), {"strides", "dilations", "kernel_shape"})
                                  : a.name() == "blocksize";
    if (divisor) EPCTX_RETURN_IF_ERROR(CheckPositive(node, label, a, where));
  }
  return Status::Ok();
}

// Walks a graph and the bodies nested in it; `calls` collects the model-local functions its
// nodes call.
class GraphWalker {
 public:
  GraphWalker(const std::map<FunctionKey, int>& functions, std::string where)
      : functions_(functions), where_(std::move(where)) {}

  Status Nodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, int depth) {
    for (int i = 0; i < nodes.size(); ++i) {
      const onnx::NodeProto& node = nodes.Get(i);
      // Unnamed nodes as the import names them.
      std::string label =
          node.name().empty() ? fmt::format("{}_{}", node.op_type(), i) : node.name();
      EPCTX_RETURN_IF_ERROR(CheckNode(node, label, where_));
      auto called = functions_.find({node.domain(), node.op_type()});
      if (called != functions_.end()) calls_.push_back(called->second);
      for (const onnx::AttributeProto& a : node.attribute()) {
        if (a.has_g()) EPCTX_RETURN_IF_ERROR(Body(label, node, a.g(), depth));
        for (const onnx::GraphProto& g : a.graphs()) {
          EPCTX_RETURN_IF_ERROR(Body(label, node, g, depth));
        }
      }
    }
    return Status::Ok();
  }

  const std::vector<int>& calls() const { return calls_; }

 private:
  Status Body(const std::string& label, const onnx::NodeProto& node, const onnx::GraphProto& g,
              int depth) {
    if (depth + 1 > kMaxGraphNesting) {
      return EPCTX_ERROR(kInvalidArgument,
                         "{}: node '{}' ({}) nests control-flow bodies more than {} deep", where_,
                         label, node.op_type(), kMaxGraphNesting);
    }
    return Nodes(g.node(), depth + 1);
  }

  const std::map<FunctionKey, int>& functions_;
  std::string where_;
  std::vector<int> calls_;
};

// Depth-first over the call graph of the model-local functions: a function met again while it
// is on the path calls itself.
class CallGraph {
 public:
  CallGraph(const onnx::ModelProto& model, std::vector<std::vector<int>> calls)
      : model_(model), calls_(std::move(calls)), state_(calls_.size(), kUnseen) {}

  Status Check(const std::string& name) {
    for (size_t f = 0; f < calls_.size(); ++f) {
      EPCTX_RETURN_IF_ERROR(Visit(static_cast<int>(f), name));
    }
    return Status::Ok();
  }

 private:
  enum State { kUnseen, kOnPath, kDone };

  std::string Name(int f) const {
    const onnx::FunctionProto& fp = model_.functions(f);
    return fp.domain().empty() ? fp.name() : fp.domain() + "." + fp.name();
  }

  Status Visit(int f, const std::string& name) {
    if (state_[static_cast<size_t>(f)] == kDone) return Status::Ok();
    if (state_[static_cast<size_t>(f)] == kOnPath) {
      std::string chain;
      bool in_cycle = false;
      for (int g : path_) {
        in_cycle = in_cycle || g == f;
        if (in_cycle) chain += Name(g) + " -> ";
      }
      return EPCTX_ERROR(kInvalidArgument,
                         "'{}': model-local function '{}' calls itself ({}{}); recursion is not "
                         "allowed",
                         name, Name(f), chain, Name(f));
    }
    if (path_.size() >= static_cast<size_t>(kMaxFunctionCallDepth)) {
      return EPCTX_ERROR(kInvalidArgument,
                         "'{}': model-local functions call each other more than {} deep (from "
                         "'{}')",
                         name, kMaxFunctionCallDepth, Name(path_.front()));
    }
    state_[static_cast<size_t>(f)] = kOnPath;
    path_.push_back(f);
    for (int g : calls_[static_cast<size_t>(f)]) EPCTX_RETURN_IF_ERROR(Visit(g, name));
    path_.pop_back();
    state_[static_cast<size_t>(f)] = kDone;
    return Status::Ok();
  }

  const onnx::ModelProto& model_;
  std::vector<std::vector<int>> calls_;
  std::vector<State> state_;
  std::vector<int> path_;
};

}  // namespace

Status PrecheckModel(const onnx::ModelProto& model, const std::string& name) {
  // A context model compiled again: say so, rather than that EPContext has no kernel.
  for (const onnx::NodeProto& node : model.graph().node()) {
    if (node.op_type() == "EPContext" && node.domain() == "com.microsoft") {
      return EPCTX_ERROR(kInvalidArgument,
                         "'{}' is a context model already (its node '{}' is a com.microsoft "
                         "EPContext): compile the original model it was made from",
                         name, node.name());
    }
  }
  std::map<FunctionKey, int> functions;
  for (int f = 0; f < model.functions_size(); ++f) {
    functions.emplace(FunctionKey{model.functions(f).domain(), model.functions(f).name()}, f);
  }
  GraphWalker main(functions, fmt::format("'{}'", name));
  EPCTX_RETURN_IF_ERROR(main.Nodes(model.graph().node(), 0));
  std::vector<std::vector<int>> calls;
  for (const onnx::FunctionProto& f : model.functions()) {
    GraphWalker body(functions, fmt::format("'{}': function '{}'", name, f.name()));
    EPCTX_RETURN_IF_ERROR(body.Nodes(f.node(), 0));
    calls.push_back(body.calls());
  }
  return CallGraph(model, std::move(calls)).Check(name);
}

}  // namespace epctx::compile
