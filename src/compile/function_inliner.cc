#include "compile/function_inliner.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "compile/body_refusal.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

// Expansion of one graph is bounded (a malicious model could nest functions deeply).
constexpr int kMaxExpansions = 100000;

// The function body `schema` gives `node` whose inputs have `input_types`, or false when it has
// none.
bool BodyFor(const onnx::OpSchema& schema, const onnx::NodeProto& node,
             const std::vector<onnx::TypeProto>& input_types, onnx::FunctionProto* body) {
  if (schema.HasFunction()) {
    const onnx::FunctionProto* f = schema.GetFunction();
    if (f == nullptr) return false;
    *body = *f;
    return true;
  }
  if (schema.HasContextDependentFunction()) {
    onnx::FunctionBodyBuildContextImpl ctx(node, input_types);
    try {
      return schema.BuildContextDependentFunction(ctx, *body);
    } catch (const std::exception&) {
      return false;
    }
  }
  return false;
}

// The type parameter ("T") of the schema's input or output `i` (the last one for the rest of a
// variadic list), or empty.
std::string TypeParameter(const std::vector<onnx::OpSchema::FormalParameter>& params, int i) {
  if (params.empty()) return "";
  return params[std::min(static_cast<size_t>(i), params.size() - 1)].GetTypeStr();
}

bool IsFloat16Tensor(const onnx::TypeProto& t) {
  return t.has_tensor_type() && t.tensor_type().elem_type() == onnx::TensorProto::FLOAT16;
}

// The com.microsoft bodies are built for float32. A node whose inputs of some type parameter are
// float16 is expanded as its float32 form between Casts, as ONNX Runtime's CPU provider runs
// float16 nodes it has no float16 kernel for (LiftFloat16 later removes the Casts of a float16
// model).
struct Float16Lift {
  std::set<std::string> params;  // the type parameters bound to float16
  std::vector<int> inputs;       // the inputs of those types, now presented as float32
};

Float16Lift LiftFloat16Inputs(const onnx::OpSchema& schema,
                              std::vector<onnx::TypeProto>& input_types) {
  Float16Lift lift;
  for (size_t i = 0; i < input_types.size(); ++i) {
    if (!IsFloat16Tensor(input_types[i])) continue;
    const std::string param = TypeParameter(schema.inputs(), static_cast<int>(i));
    if (param.empty()) continue;
    lift.params.insert(param);
    lift.inputs.push_back(static_cast<int>(i));
    input_types[i].mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  return lift;
}

onnx::NodeProto CastNode(const std::string& name, const std::string& from, const std::string& to,
                         int64_t elem_type) {
  onnx::NodeProto cast;
  cast.set_op_type("Cast");
  cast.set_name(name);
  cast.add_input(from);
  cast.add_output(to);
  onnx::AttributeProto* a = cast.add_attribute();
  a->set_name("to");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(elem_type);
  return cast;
}

// Replaces references to the function's attributes (ref_attr_name) with the node's values, or
// with the schema's default when the node does not set them; a reference with neither is dropped.
bool BindAttributes(onnx::NodeProto& inner, const onnx::NodeProto& call,
                    const onnx::OpSchema* schema) {
  auto* attrs = inner.mutable_attribute();
  for (int i = 0; i < attrs->size();) {
    onnx::AttributeProto& a = *attrs->Mutable(i);
    if (a.ref_attr_name().empty()) {
      ++i;
      continue;
    }
    const onnx::AttributeProto* given = nullptr;
    for (const auto& c : call.attribute()) {
      if (c.name() == a.ref_attr_name()) given = &c;
    }
    if (given == nullptr && schema != nullptr) {
      auto it = schema->attributes().find(a.ref_attr_name());
      if (it != schema->attributes().end() &&
          it->second.default_value.type() != onnx::AttributeProto::UNDEFINED) {
        given = &it->second.default_value;
      }
    }
    if (given == nullptr) {
      attrs->DeleteSubrange(i, 1);
      continue;
    }
    std::string name = a.name();
    a = *given;
    a.set_name(name);
    ++i;
  }
  return true;
}

}  // namespace

namespace {

using TypeMap = std::unordered_map<std::string, const onnx::TypeProto*>;
using HasKernel = std::function<bool(const std::string&, const std::string&, int64_t)>;

// One model's expansion state, shared by its main graph and control-flow bodies.
struct Expansion {
  onnx::ModelProto& model;
  const HasKernel& has_kernel;
  const std::string& name;
  // Why a node's body was not built, by node name (or first output); null: logged at once.
  std::map<std::string, std::string>* refusals;
  std::map<std::string, int64_t> opsets;
  int expanded = 0;
  int counter = 0;
};

// Expands the function ops of `graph` and, recursively, of its nodes' bodies. `outer` holds the
// types of the values the graph can see from enclosing graphs.
Status InlineGraph(onnx::GraphProto& graph, const TypeMap& outer, Expansion& x) {
  TypeMap types = outer;
  // Initializers' types too: a body may depend on a weight's shape (com.microsoft Attention's).
  std::deque<onnx::TypeProto> initializer_types;
  for (const auto& init : graph.initializer()) {
    onnx::TypeProto& t = initializer_types.emplace_back();
    t.mutable_tensor_type()->set_elem_type(init.data_type());
    auto* shape = t.mutable_tensor_type()->mutable_shape();
    for (int64_t d : init.dims()) shape->add_dim()->set_dim_value(d);
    types[init.name()] = &t;
  }
  for (const auto& vi : graph.input()) types[vi.name()] = &vi.type();
  for (const auto& vi : graph.value_info()) types[vi.name()] = &vi.type();
  for (const auto& vi : graph.output()) types[vi.name()] = &vi.type();

  const int expanded_before = x.expanded;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> out;
  for (const onnx::NodeProto& original : graph.node()) {
    onnx::NodeProto node = original;
    std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    int64_t opset = x.opsets.count(domain) ? x.opsets[domain] : 1;
    // ONNX's function ops, and the contrib ops whose schemas epctx gives a body (contrib/).
    const bool contrib = domain == "com.microsoft";
    const onnx::OpSchema* schema =
        domain.empty() || contrib
            ? onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), node.domain())
            : nullptr;
    onnx::FunctionProto body;
    Float16Lift lift;
    bool built = false;
    if (schema != nullptr && !x.has_kernel(domain, node.op_type(), opset)) {
      std::vector<onnx::TypeProto> input_types;
      for (const std::string& in : node.input()) {
        auto it = types.find(in);
        input_types.push_back(it != types.end() ? *it->second : onnx::TypeProto());
      }
      if (contrib) lift = LiftFloat16Inputs(*schema, input_types);
      const std::string key =
          node.name().empty() && node.output_size() > 0 ? node.output(0) : node.name();
      std::string refusal;
      {
        std::optional<ScopedBodyRefusalCapture> capture;
        if (x.refusals != nullptr) capture.emplace(&refusal);
        built = BodyFor(*schema, node, input_types, &body);
      }
      if (x.refusals != nullptr) {
        if (built) {
          x.refusals->erase(key);
        } else if (!refusal.empty()) {
          (*x.refusals)[key] = fmt::format("node '{}': {}", key, refusal);
        }
      }
    }
    if (!built) {
      for (auto& a : *node.mutable_attribute()) {
        if (a.type() == onnx::AttributeProto::GRAPH) {
          EPCTX_RETURN_IF_ERROR(InlineGraph(*a.mutable_g(), types, x));
        }
      }
      *out.Add() = std::move(node);
      continue;
    }
    if (++x.expanded > kMaxExpansions) {
      return EPCTX_ERROR(kUnsupported, "'{}': function expansion does not terminate", x.name);
    }
    // Formal parameter names -> actual value names; everything else gets a unique prefix.
    std::unordered_map<std::string, std::string> rename;
    for (int i = 0; i < body.input_size(); ++i) {
      rename[body.input(i)] = i < node.input_size() ? node.input(i) : "";
    }
    for (int i = 0; i < body.output_size(); ++i) {
      rename[body.output(i)] = i < node.output_size() ? node.output(i) : "";
    }
    std::string prefix =
        fmt::format("{}__{}_{}__", node.name().empty() ? node.op_type() : node.name(),
                    node.op_type(), x.counter++);
    auto map_name = [&](const std::string& n) -> std::string {
      if (n.empty()) return n;
      auto it = rename.find(n);
      return it != rename.end() ? it->second : prefix + n;
    };
    std::vector<onnx::NodeProto> inner_nodes;
    // A float16 node's lifted inputs enter through Casts to float32, and its outputs of a lifted
    // type leave through Casts back.
    std::vector<onnx::NodeProto> casts_out;
    for (int i : lift.inputs) {
      if (i >= body.input_size() || node.input(i).empty()) continue;
      const std::string lifted_name = fmt::format("{}float32_input_{}", prefix, i);
      inner_nodes.push_back(CastNode(fmt::format("{}cast_input_{}", prefix, i), node.input(i),
                                     lifted_name, onnx::TensorProto::FLOAT));
      rename[body.input(i)] = lifted_name;
    }
    for (int i = 0; i < body.output_size() && i < node.output_size(); ++i) {
      if (node.output(i).empty() || lift.params.count(TypeParameter(schema->outputs(), i)) == 0)
        continue;
      const std::string lifted_name = fmt::format("{}float32_output_{}", prefix, i);
      casts_out.push_back(CastNode(fmt::format("{}cast_output_{}", prefix, i), lifted_name,
                                   node.output(i), onnx::TensorProto::FLOAT16));
      rename[body.output(i)] = lifted_name;
    }
    for (const onnx::NodeProto& f : body.node()) {
      onnx::NodeProto inner = f;
      for (int i = 0; i < inner.input_size(); ++i) inner.set_input(i, map_name(inner.input(i)));
      for (int i = 0; i < inner.output_size(); ++i) inner.set_output(i, map_name(inner.output(i)));
      inner.set_name(prefix + f.name());
      BindAttributes(inner, node, schema);
      inner_nodes.push_back(std::move(inner));
    }
    for (onnx::NodeProto& cast : casts_out) inner_nodes.push_back(std::move(cast));
    // Inner nodes are not expanded in this round: their input types are unknown until shape
    // inference has seen the expanded graph (the caller runs rounds).
    for (onnx::NodeProto& inner : inner_nodes) *out.Add() = std::move(inner);
    // Bodies may use opsets of their own; make sure the model imports them.
    for (const auto& op : body.opset_import()) {
      std::string d = op.domain() == "ai.onnx" ? "" : op.domain();
      if (!x.opsets.count(d)) {
        x.opsets[d] = op.version();
        auto* imp = x.model.add_opset_import();
        imp->set_domain(op.domain());
        imp->set_version(op.version());
      }
    }
  }
  // Also when only a body changed: the kept nodes in `out` carry the expanded bodies.
  if (x.expanded > expanded_before) graph.mutable_node()->Swap(&out);
  return Status::Ok();
}

}  // namespace

Result<int> InlineFunctionOps(onnx::ModelProto& model, const HasKernel& has_kernel,
                              const std::string& name,
                              std::map<std::string, std::string>* refusals) {
  Expansion x{model, has_kernel, name, refusals, {}, 0, 0};
  for (const auto& op : model.opset_import()) {
    x.opsets[op.domain() == "ai.onnx" ? "" : op.domain()] = op.version();
  }
  EPCTX_RETURN_IF_ERROR(InlineGraph(*model.mutable_graph(), {}, x));
  return x.expanded;
}

}  // namespace epctx::compile
