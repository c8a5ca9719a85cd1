#include "compile/onnx_import.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <climits>
#include <unordered_map>

#include "compile/function_inliner.h"
#include "compile/onnx_tensor.h"
#include "exec/kernel.h"
#include "util/file.h"
#include "util/hash.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

using ModelPtr = std::shared_ptr<onnx::ModelProto>;

constexpr int kMaxInlineRounds = 8;

Status RunChecker(const onnx::ModelProto& model, const std::string& name) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    return EPCTX_ERROR(kInvalidArgument, "'{}': not a valid ONNX model: {}", name, e.what());
  }
  return Status::Ok();
}

Status RunShapeInference(onnx::ModelProto& model, const std::string& name) {
  try {
    onnx::ShapeInferenceOptions options{/*check_type=*/false, /*error_mode=*/0,
                                        /*enable_data_propagation=*/true};
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return EPCTX_ERROR(kInvalidArgument, "'{}': shape inference failed: {}", name, e.what());
  }
  return Status::Ok();
}

Status FillType(const onnx::TypeProto& type, IrValue& value, const std::string& name) {
  if (!type.has_tensor_type()) {
    return EPCTX_ERROR(kUnsupported,
                       "'{}': value '{}' is not a tensor (sequence, map and "
                       "optional types are not supported)",
                       name, value.name);
  }
  const auto& tt = type.tensor_type();
  value.dtype = static_cast<DataType>(tt.elem_type());
  value.shape_known = tt.has_shape();
  value.shape.clear();
  value.dim_names.clear();
  if (tt.has_shape()) {
    for (const auto& dim : tt.shape().dim()) {
      value.shape.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
      value.dim_names.push_back(dim.has_dim_param() ? dim.dim_param() : "");
    }
  }
  return Status::Ok();
}

class Importer {
 public:
  Importer(ModelPtr model, std::string name, std::string model_dir)
      : model_(std::move(model)), name_(std::move(name)), external_(std::move(model_dir)) {}

  Result<ImportedModel> Run() {
    ImportedModel out;
    out.ir_version = model_->ir_version();
    IrGraph& g = out.graph;
    const onnx::GraphProto& gp = model_->graph();
    g.name = gp.name();
    for (const auto& op : model_->opset_import()) {
      g.opsets[op.domain() == "ai.onnx" ? "" : op.domain()] = op.version();
    }
    if (model_->functions_size() > 0) {
      return EPCTX_ERROR(kUnsupported, "'{}': model-local functions are not supported", name_);
    }

    for (const auto& init : gp.initializer()) {
      IrValue v;
      v.name = init.name();
      EPCTX_ASSIGN_OR_RETURN(
          v.constant,
          ConstantFromTensorProto(init, model_, &external_,
                                  fmt::format("'{}': initializer '{}'", name_, init.name())));
      v.dtype = v.constant->dtype;
      v.shape_known = true;
      v.shape = v.constant->shape;
      v.dim_names.assign(v.shape.size(), "");
      EPCTX_RETURN_IF_ERROR(Define(g, std::move(v)));
    }
    if (gp.sparse_initializer_size() > 0) {
      return EPCTX_ERROR(kUnsupported, "'{}': sparse initializers are not supported", name_);
    }
    for (const auto& in : gp.input()) {
      if (by_name_.count(in.name())) continue;  // an initializer listed as input: a constant
      IrValue v;
      v.name = in.name();
      EPCTX_RETURN_IF_ERROR(FillType(in.type(), v, name_));
      EPCTX_ASSIGN_OR_RETURN(int index, DefineIndex(g, std::move(v)));
      g.inputs.push_back(index);
      out.input_value_infos.push_back(in.SerializeAsString());
    }
    for (const auto& vi : gp.value_info()) inferred_[vi.name()] = &vi.type();
    for (const auto& vi : gp.output()) inferred_[vi.name()] = &vi.type();

    for (int n = 0; n < gp.node_size(); ++n) {
      EPCTX_RETURN_IF_ERROR(ImportNode(g, gp.node(n), n));
    }
    for (const auto& o : gp.output()) {
      auto it = by_name_.find(o.name());
      if (it == by_name_.end()) {
        return EPCTX_ERROR(kInvalidArgument, "'{}': graph output '{}' is never produced", name_,
                           o.name());
      }
      IrValue& v = g.values[static_cast<size_t>(it->second)];
      if (!v.shape_known) EPCTX_RETURN_IF_ERROR(FillType(o.type(), v, name_));
      g.outputs.push_back(it->second);
      out.output_value_infos.push_back(o.SerializeAsString());
    }
    return out;
  }

 private:
  Status Define(IrGraph& g, IrValue v) { return DefineIndex(g, std::move(v)).status(); }

  Result<int> DefineIndex(IrGraph& g, IrValue v) {
    if (v.name.empty()) {
      return EPCTX_ERROR(kInvalidArgument, "'{}': a value has an empty name", name_);
    }
    if (by_name_.count(v.name)) {
      return EPCTX_ERROR(kInvalidArgument, "'{}': value '{}' is defined twice", name_, v.name);
    }
    std::string n = v.name;
    int index = g.AddValue(std::move(v));
    by_name_[n] = index;
    return index;
  }

  Result<IrAttribute> ImportAttribute(const onnx::AttributeProto& a, const std::string& node) {
    IrAttribute out;
    out.name = a.name();
    using A = onnx::AttributeProto;
    switch (a.type()) {
      case A::FLOAT:
        out.type = exec::AttrType::kFloat;
        out.f = a.f();
        break;
      case A::INT:
        out.type = exec::AttrType::kInt;
        out.i = a.i();
        break;
      case A::STRING:
        out.type = exec::AttrType::kString;
        out.s = a.s();
        break;
      case A::FLOATS:
        out.type = exec::AttrType::kFloats;
        out.floats.assign(a.floats().begin(), a.floats().end());
        break;
      case A::INTS:
        out.type = exec::AttrType::kInts;
        out.ints.assign(a.ints().begin(), a.ints().end());
        break;
      case A::STRINGS:
        out.type = exec::AttrType::kStrings;
        out.strings.assign(a.strings().begin(), a.strings().end());
        break;
      case A::TENSOR: {
        out.type = exec::AttrType::kTensor;
        EPCTX_ASSIGN_OR_RETURN(
            out.tensor, ConstantFromTensorProto(
                            a.t(), model_, &external_,
                            fmt::format("'{}': node '{}' attribute '{}'", name_, node, a.name())));
        break;
      }
      case A::GRAPH:
      case A::GRAPHS:
        return EPCTX_ERROR(kUnsupported,
                           "'{}': node '{}': control flow (graph attribute '{}') "
                           "is not supported yet",
                           name_, node, a.name());
      default:
        return EPCTX_ERROR(kUnsupported,
                           "'{}': node '{}': attribute '{}' of type {} is not "
                           "supported",
                           name_, node, a.name(), static_cast<int>(a.type()));
    }
    return out;
  }

  // A Constant node becomes a constant value; everything else an IR node.
  Status ImportNode(IrGraph& g, const onnx::NodeProto& np, int position) {
    std::string node_name =
        np.name().empty() ? fmt::format("{}_{}", np.op_type(), position) : np.name();
    std::string domain = np.domain() == "ai.onnx" ? "" : np.domain();
    if (domain.empty() && np.op_type() == "Constant") return ImportConstantNode(g, np, node_name);

    IrNode node;
    node.name = node_name;
    node.op_type = np.op_type();
    node.domain = domain;
    for (const auto& a : np.attribute()) {
      EPCTX_ASSIGN_OR_RETURN(IrAttribute attr, ImportAttribute(a, node_name));
      node.attrs.push_back(std::move(attr));
    }
    for (const std::string& in : np.input()) {
      if (in.empty()) {
        node.inputs.push_back(-1);
        continue;
      }
      auto it = by_name_.find(in);
      if (it == by_name_.end()) {
        return EPCTX_ERROR(kInvalidArgument,
                           "'{}': node '{}' reads '{}', which is not defined "
                           "before it",
                           name_, node_name, in);
      }
      node.inputs.push_back(it->second);
    }
    for (const std::string& o : np.output()) {
      if (o.empty()) {
        node.outputs.push_back(-1);
        continue;
      }
      IrValue v;
      v.name = o;
      auto inferred = inferred_.find(o);
      if (inferred != inferred_.end()) {
        EPCTX_RETURN_IF_ERROR(FillType(*inferred->second, v, name_));
      }
      EPCTX_ASSIGN_OR_RETURN(int index, DefineIndex(g, std::move(v)));
      node.outputs.push_back(index);
    }
    g.nodes.push_back(std::move(node));
    return Status::Ok();
  }

  Status ImportConstantNode(IrGraph& g, const onnx::NodeProto& np, const std::string& node_name) {
    if (np.output_size() != 1 || np.attribute_size() != 1) {
      return EPCTX_ERROR(kInvalidArgument,
                         "'{}': Constant node '{}' needs one output and one "
                         "attribute",
                         name_, node_name);
    }
    const auto& a = np.attribute(0);
    std::shared_ptr<ConstantData> data;
    const std::string& attr = a.name();
    if (attr == "value") {
      EPCTX_ASSIGN_OR_RETURN(
          data, ConstantFromTensorProto(a.t(), model_, &external_,
                                        fmt::format("'{}': Constant '{}'", name_, node_name)));
    } else if (attr == "value_float") {
      data = ConstantData::FromVector<float>(DataType::kFloat32, {}, {a.f()});
    } else if (attr == "value_floats") {
      data = ConstantData::FromVector<float>(DataType::kFloat32, {a.floats_size()},
                                             {a.floats().begin(), a.floats().end()});
    } else if (attr == "value_int") {
      data = ConstantData::FromVector<int64_t>(DataType::kInt64, {}, {a.i()});
    } else if (attr == "value_ints") {
      data = ConstantData::FromVector<int64_t>(DataType::kInt64, {a.ints_size()},
                                               {a.ints().begin(), a.ints().end()});
    } else {
      return EPCTX_ERROR(kUnsupported, "'{}': Constant '{}' with attribute '{}' is not supported",
                         name_, node_name, attr);
    }
    IrValue v;
    v.name = np.output(0);
    v.dtype = data->dtype;
    v.shape_known = true;
    v.shape = data->shape;
    v.dim_names.assign(v.shape.size(), "");
    v.constant = std::move(data);
    return Define(g, std::move(v));
  }

  ModelPtr model_;
  std::string name_;
  ExternalDataFiles external_;
  std::unordered_map<std::string, int> by_name_;
  std::unordered_map<std::string, const onnx::TypeProto*> inferred_;
};

Result<ImportedModel> Import(std::span<const std::byte> bytes, const std::string& name,
                             const std::string& model_dir) {
  if (bytes.size() >= static_cast<size_t>(INT_MAX)) {
    return EPCTX_ERROR(kUnsupported,
                       "'{}': models of 2 GiB or more must keep their weights in "
                       "external data",
                       name);
  }
  auto model = std::make_shared<onnx::ModelProto>();
  if (!model->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return EPCTX_ERROR(kInvalidArgument, "'{}': not an ONNX model (protobuf parse failed)", name);
  }
  if (!model->has_graph()) {
    return EPCTX_ERROR(kInvalidArgument, "'{}': ONNX model has no graph", name);
  }
  EPCTX_RETURN_IF_ERROR(RunChecker(*model, name));
  EPCTX_RETURN_IF_ERROR(RunShapeInference(*model, name));
  auto has_kernel = [](const std::string& domain, const std::string& op, int64_t opset) {
    return exec::KernelRegistry::Global().Supports(domain, op, opset);
  };
  // Function bodies may call further functions whose bodies depend on input types, which are
  // known only after shape inference over the expanded graph: expand in rounds.
  for (int round = 0; round < kMaxInlineRounds; ++round) {
    EPCTX_ASSIGN_OR_RETURN(int inlined, InlineFunctionOps(*model, has_kernel, name));
    if (inlined == 0) break;
    EPCTX_RETURN_IF_ERROR(RunShapeInference(*model, name));
  }
  Importer importer(model, name, model_dir);
  EPCTX_ASSIGN_OR_RETURN(ImportedModel out, importer.Run());
  out.source.size = bytes.size();
  out.source.hash = Hash64(bytes);
  return out;
}

}  // namespace

Result<ImportedModel> ImportModelFile(const std::string& path) {
  EPCTX_ASSIGN_OR_RETURN(MappedFile file, MappedFile::Open(path));
  EPCTX_ASSIGN_OR_RETURN(ImportedModel out, Import(file.bytes(), path, DirName(path)));
  out.source.path = path;
  out.source.mtime_ns = file.identity().mtime_ns;
  return out;
}

Result<ImportedModel> ImportModelBytes(std::span<const std::byte> bytes, const std::string& name,
                                       const std::string& model_dir) {
  return Import(bytes, name, model_dir);
}

}  // namespace epctx::compile
