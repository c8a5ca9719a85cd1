#include "compile/onnx_import.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <climits>
#include <map>
#include <unordered_map>

#include "compile/contrib/contrib_schemas.h"
#include "compile/function_inliner.h"
#include "compile/inline_weights.h"
#include "compile/onnx_inference_scope.h"
#include "compile/onnx_newer_opsets.h"
#include "compile/onnx_precheck.h"
#include "compile/onnx_shape_fixes.h"
#include "compile/onnx_tensor.h"
#include "compile/symbolic/symbolic_shapes.h"
#include "compile/unknown_operators.h"
#include "exec/kernel.h"
#include "exec/kernels/epctx_ops.h"
#include "util/file.h"
#include "util/hash.h"
#include "util/logging.h"
#include "util/status_macros.h"

// onnx 1.12's check_model(ModelProto) resolves external data against the working directory (a
// model compiled from any other folder was refused: "should be stored in m.onnx.data, but it
// doesn't exist"). Its check_model(ModelProto, CheckerContext&), which the header does not
// declare but the library exports, runs the same checks with the folder the context names.
namespace onnx::checker {
void check_model(const ModelProto& model, CheckerContext& ctx);
}  // namespace onnx::checker

namespace epctx::compile {
namespace {

using ModelPtr = std::shared_ptr<onnx::ModelProto>;

constexpr int kMaxInlineRounds = 8;

// The model's checks, external data resolved against `model_dir`.
void CheckModelIn(const onnx::ModelProto& model, const std::string& model_dir) {
  onnx::checker::CheckerContext ctx;
  ctx.set_model_dir(model_dir);
  onnx::checker::check_model(model, ctx);
}

// Whether any initializer of the main graph keeps its data in another file.
bool HasExternalData(const onnx::ModelProto& model) {
  for (const auto& t : model.graph().initializer()) {
    if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) return true;
  }
  return false;
}

// onnx 1.12's checker requires a shape on every input and output of the main graph; the ONNX
// spec and ONNX Runtime do not (a graph built with onnx.helper.make_tensor_value_info(name,
// type, None) has none, and ONNX Runtime infers its outputs' shapes). Such tensors get an empty
// shape while the checker runs, removed again before shape inference fills them in.
class ShapesForTheChecker {
 public:
  explicit ShapesForTheChecker(onnx::GraphProto& graph) {
    for (auto* values : {graph.mutable_input(), graph.mutable_output()}) {
      for (onnx::ValueInfoProto& v : *values) {
        if (!v.has_type() || !v.type().has_tensor_type()) continue;
        onnx::TypeProto_Tensor* tensor = v.mutable_type()->mutable_tensor_type();
        if (tensor->has_shape()) continue;
        tensor->mutable_shape();
        given_.push_back(tensor);
      }
    }
  }
  ~ShapesForTheChecker() {
    for (onnx::TypeProto_Tensor* tensor : given_) tensor->clear_shape();
  }
  ShapesForTheChecker(const ShapesForTheChecker&) = delete;
  ShapesForTheChecker& operator=(const ShapesForTheChecker&) = delete;

 private:
  std::vector<onnx::TypeProto_Tensor*> given_;
};

Status RunChecker(onnx::ModelProto& model, const std::string& name, const std::string& model_dir) {
  ShapesForTheChecker shapes(*model.mutable_graph());
  if (model_dir.empty() && HasExternalData(model)) {
    return EPCTX_ERROR(kInvalidArgument,
                       "'{}': the model keeps weights in external data files, which are found "
                       "relative to its folder, and a model given as bytes has none (set "
                       "session.model_external_initializers_file_folder_path, or load it from "
                       "its file)",
                       name);
  }
  try {
    CheckModelIn(model, model_dir);
  } catch (const std::exception& e) {
    return EPCTX_ERROR(kInvalidArgument, "'{}': not a valid ONNX model: {}", name, e.what());
  }
  return Status::Ok();
}

Status RunShapeInference(onnx::ModelProto& model, const std::string& name) {
  InstallShapeInferenceFixes();
  try {
    OnnxInferenceScope scope(model);
    if (scope.set_aside() > 0) {
      Logger().debug(
          "'{}': {} nodes get no onnx shape inference (first operator onnx does not "
          "know: {})",
          name, scope.set_aside(), scope.first_unknown_op());
    }
    onnx::ShapeInferenceOptions options{/*check_type=*/false, /*error_mode=*/0,
                                        /*enable_data_propagation=*/true};
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return EPCTX_ERROR(kInvalidArgument, "'{}': shape inference failed: {}", name, e.what());
  }
  return Status::Ok();
}

Status FillType(const onnx::TypeProto& type, IrValue& value, const std::string& name) {
  const onnx::TypeProto* held = &type;
  value.kind = ValueKind::kTensor;
  value.optional = false;
  if (held->has_optional_type() && held->optional_type().has_elem_type()) {
    value.optional = true;
    held = &held->optional_type().elem_type();
  }
  if (held->has_sequence_type() && held->sequence_type().has_elem_type()) {
    value.kind = ValueKind::kSequence;
    held = &held->sequence_type().elem_type();
  }
  if (!held->has_tensor_type()) {
    return EPCTX_ERROR(kUnsupported,
                       "'{}': value '{}' is not a tensor, a sequence of tensors or an optional of "
                       "either (maps, sparse tensors and nested sequences are not supported)",
                       name, value.name);
  }
  const auto& tt = held->tensor_type();
  value.dtype = static_cast<DataType>(tt.elem_type());
  value.shape_known = value.kind == ValueKind::kTensor && tt.has_shape();
  value.shape.clear();
  value.dim_names.clear();
  if (value.shape_known) {
    for (const auto& dim : tt.shape().dim()) {
      value.shape.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
      value.dim_names.push_back(dim.has_dim_param() ? dim.dim_param() : "");
    }
  }
  return Status::Ok();
}

// What every graph of one model shares while it is imported.
struct ModelContext {
  ModelPtr model;
  std::string name;  // for messages
  ExternalDataFiles external;
};

// Imports one graph: the main graph, or a control-flow body. A body may read values of the
// graphs around it by name; such a value becomes a capture: a constant is shared, anything else
// becomes an extra input of the body, and the node owning the body reads it as an implicit input.
class GraphImporter {
 public:
  GraphImporter(ModelContext& ctx, IrGraph& graph, GraphImporter* parent)
      : ctx_(ctx), g_(graph), parent_(parent) {}

  // Imports `gp` into the graph. For the main graph, `io` receives the serialized declarations
  // of the graph inputs and outputs.
  Status Import(const onnx::GraphProto& gp, ImportedModel* io) {
    g_.name = gp.name();
    for (const auto& init : gp.initializer()) {
      if (init.data_type() == onnx::TensorProto_DataType_STRING) {
        EPCTX_RETURN_IF_ERROR(DefineStringConstant(
            init, init.name(), fmt::format("'{}': initializer '{}'", ctx_.name, init.name())));
        continue;
      }
      IrValue v;
      v.name = init.name();
      EPCTX_ASSIGN_OR_RETURN(
          v.constant,
          ConstantFromTensorProto(init, ctx_.model, ctx_.external,
                                  fmt::format("'{}': initializer '{}'", ctx_.name, init.name())));
      v.dtype = v.constant->dtype;
      v.shape_known = true;
      v.shape = v.constant->shape;
      v.dim_names.assign(v.shape.size(), "");
      EPCTX_RETURN_IF_ERROR(DefineIndex(std::move(v)).status());
    }
    if (gp.sparse_initializer_size() > 0) {
      return EPCTX_ERROR(kUnsupported, "'{}': sparse initializers are not supported", ctx_.name);
    }
    for (const auto& in : gp.input()) {
      if (by_name_.count(in.name())) {
        // An initializer listed as a main-graph input is a constant; body inputs are positional.
        if (parent_ == nullptr) continue;
        return EPCTX_ERROR(kUnsupported,
                           "'{}': body graph '{}' input '{}' is also an initializer, which is "
                           "not supported",
                           ctx_.name, gp.name(), in.name());
      }
      IrValue v;
      v.name = in.name();
      EPCTX_RETURN_IF_ERROR(FillType(in.type(), v, ctx_.name));
      EPCTX_ASSIGN_OR_RETURN(int index, DefineIndex(std::move(v)));
      g_.inputs.push_back(index);
      if (io != nullptr) io->input_value_infos.push_back(in.SerializeAsString());
    }
    for (const auto& vi : gp.value_info()) inferred_[vi.name()] = &vi.type();
    for (const auto& vi : gp.output()) inferred_[vi.name()] = &vi.type();

    for (int n = 0; n < gp.node_size(); ++n) {
      EPCTX_RETURN_IF_ERROR(ImportNode(gp.node(n), n));
    }
    for (const auto& o : gp.output()) {
      EPCTX_ASSIGN_OR_RETURN(int index, Lookup(o.name()));
      if (index < 0) {
        return EPCTX_ERROR(kInvalidArgument, "'{}': graph output '{}' is never produced", ctx_.name,
                           o.name());
      }
      IrValue& v = g_.values[static_cast<size_t>(index)];
      if (!v.shape_known) EPCTX_RETURN_IF_ERROR(FillType(o.type(), v, ctx_.name));
      g_.outputs.push_back(index);
      if (io != nullptr) io->output_value_infos.push_back(o.SerializeAsString());
    }
    return Status::Ok();
  }

  // Values of the enclosing graph this body reads (by index there), and the body input standing
  // for each.
  const std::vector<int>& captured_outer() const { return captured_outer_; }
  const std::vector<int>& captured_inner() const { return captured_inner_; }

 private:
  Result<int> DefineIndex(IrValue v) {
    if (v.name.empty()) {
      return EPCTX_ERROR(kInvalidArgument, "'{}': a value has an empty name", ctx_.name);
    }
    if (by_name_.count(v.name)) {
      return EPCTX_ERROR(kInvalidArgument, "'{}': value '{}' is defined twice", ctx_.name, v.name);
    }
    std::string n = v.name;
    int index = g_.AddValue(std::move(v));
    by_name_[n] = index;
    return index;
  }

  // The value called `name` in this graph, capturing it from the enclosing graphs when it is
  // defined there; -1 when no graph in scope defines it.
  Result<int> Lookup(const std::string& name) {
    auto it = by_name_.find(name);
    if (it != by_name_.end()) return it->second;
    if (parent_ == nullptr) return -1;
    EPCTX_ASSIGN_OR_RETURN(int outer, parent_->Lookup(name));
    if (outer < 0) return -1;
    IrValue v = parent_->g_.values[static_cast<size_t>(outer)];
    EPCTX_ASSIGN_OR_RETURN(int inner, DefineIndex(std::move(v)));
    if (!g_.values[static_cast<size_t>(inner)].is_constant()) {
      captured_outer_.push_back(outer);
      captured_inner_.push_back(inner);
    }
    return inner;
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
        EPCTX_ASSIGN_OR_RETURN(out.tensor,
                               ConstantFromTensorProto(a.t(), ctx_.model, ctx_.external,
                                                       fmt::format("'{}': node '{}' attribute '{}'",
                                                                   ctx_.name, node, a.name())));
        break;
      }
      case A::GRAPH:
        out.type = exec::AttrType::kGraph;
        out.body = std::make_shared<IrGraph>();  // imported by ImportBodies
        break;
      default:
        return EPCTX_ERROR(kUnsupported,
                           "'{}': node '{}': attribute '{}' of type {} is not "
                           "supported",
                           ctx_.name, node, a.name(), static_cast<int>(a.type()));
    }
    return out;
  }

  // Imports the node's bodies and gives each the same capture list: the union of what they read
  // from this graph, which the node reads as its implicit inputs.
  Status ImportBodies(const onnx::NodeProto& np, IrNode& node) {
    std::vector<std::unique_ptr<GraphImporter>> importers;
    std::vector<IrGraph*> bodies;
    std::vector<int> captures;
    for (int k = 0; k < np.attribute_size(); ++k) {
      if (np.attribute(k).type() != onnx::AttributeProto::GRAPH) continue;
      IrAttribute* found = node.FindAttr(np.attribute(k).name());
      if (found == nullptr || !found->body) continue;
      IrAttribute& attr = *found;
      attr.body->opsets = g_.opsets;
      auto importer = std::make_unique<GraphImporter>(ctx_, *attr.body, this);
      EPCTX_RETURN_IF_ERROR(importer->Import(np.attribute(k).g(), nullptr));
      for (int outer : importer->captured_outer()) {
        if (std::find(captures.begin(), captures.end(), outer) == captures.end()) {
          captures.push_back(outer);
        }
      }
      bodies.push_back(attr.body.get());
      importers.push_back(std::move(importer));
    }
    for (size_t b = 0; b < bodies.size(); ++b) {
      const GraphImporter& importer = *importers[b];
      IrGraph& body = *bodies[b];
      for (int outer : captures) {
        auto found =
            std::find(importer.captured_outer().begin(), importer.captured_outer().end(), outer);
        if (found != importer.captured_outer().end()) {
          size_t at = static_cast<size_t>(found - importer.captured_outer().begin());
          body.inputs.push_back(importer.captured_inner()[at]);
          continue;
        }
        // Captured by a sibling body only: declared here too, and left unread.
        IrValue unused = g_.values[static_cast<size_t>(outer)];
        unused.name = body.UniqueName(unused.name);
        body.inputs.push_back(body.AddValue(std::move(unused)));
      }
    }
    node.inputs.insert(node.inputs.end(), captures.begin(), captures.end());
    node.implicit_inputs = static_cast<int>(captures.size());
    return Status::Ok();
  }

  // A Constant node becomes a constant value; everything else an IR node.
  Status ImportNode(const onnx::NodeProto& np, int position) {
    std::string node_name =
        np.name().empty() ? fmt::format("{}_{}", np.op_type(), position) : np.name();
    std::string domain = np.domain() == "ai.onnx" ? "" : np.domain();
    if (domain.empty() && np.op_type() == "Constant") return ImportConstantNode(np, node_name);

    IrNode node;
    node.name = node_name;
    node.op_type = np.op_type();
    node.domain = domain;
    for (const auto& a : np.attribute()) {
      // Optional's `type` says what an Optional without input holds; the output's inferred type
      // says the same, and the kernel reads that.
      if (domain.empty() && np.op_type() == "Optional" &&
          a.type() == onnx::AttributeProto::TYPE_PROTO) {
        continue;
      }
      EPCTX_ASSIGN_OR_RETURN(IrAttribute attr, ImportAttribute(a, node_name));
      node.attrs.push_back(std::move(attr));
    }
    for (const std::string& in : np.input()) {
      if (in.empty()) {
        node.inputs.push_back(-1);
        continue;
      }
      EPCTX_ASSIGN_OR_RETURN(int index, Lookup(in));
      if (index < 0) {
        return EPCTX_ERROR(kInvalidArgument,
                           "'{}': node '{}' reads '{}', which is not defined "
                           "before it",
                           ctx_.name, node_name, in);
      }
      node.inputs.push_back(index);
    }
    if (node.has_bodies()) EPCTX_RETURN_IF_ERROR(ImportBodies(np, node));
    for (const std::string& o : np.output()) {
      if (o.empty()) {
        node.outputs.push_back(-1);
        continue;
      }
      IrValue v;
      v.name = o;
      auto inferred = inferred_.find(o);
      if (inferred != inferred_.end()) {
        EPCTX_RETURN_IF_ERROR(FillType(*inferred->second, v, ctx_.name));
      }
      EPCTX_ASSIGN_OR_RETURN(int index, DefineIndex(std::move(v)));
      node.outputs.push_back(index);
    }
    g_.nodes.push_back(std::move(node));
    return Status::Ok();
  }

  Status ImportConstantNode(const onnx::NodeProto& np, const std::string& node_name) {
    if (np.output_size() != 1 || np.attribute_size() != 1) {
      return EPCTX_ERROR(kInvalidArgument,
                         "'{}': Constant node '{}' needs one output and one "
                         "attribute",
                         ctx_.name, node_name);
    }
    const auto& a = np.attribute(0);
    std::shared_ptr<ConstantData> data;
    const std::string& attr = a.name();
    const std::string where = fmt::format("'{}': Constant '{}'", ctx_.name, node_name);
    if (attr == "value" && a.t().data_type() == onnx::TensorProto_DataType_STRING) {
      return DefineStringConstant(a.t(), np.output(0), where);
    }
    if (attr == "value_string" || attr == "value_strings") {
      onnx::TensorProto t;
      t.set_data_type(onnx::TensorProto_DataType_STRING);
      if (attr == "value_string") {
        t.add_string_data(a.s());
      } else {
        t.add_dims(a.strings_size());
        for (const std::string& text : a.strings()) t.add_string_data(text);
      }
      return DefineStringConstant(t, np.output(0), where);
    }
    if (attr == "value") {
      EPCTX_ASSIGN_OR_RETURN(
          data, ConstantFromTensorProto(a.t(), ctx_.model, ctx_.external,
                                        fmt::format("'{}': Constant '{}'", ctx_.name, node_name)));
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
                         ctx_.name, node_name, attr);
    }
    IrValue v;
    v.name = np.output(0);
    v.dtype = data->dtype;
    v.shape_known = true;
    v.shape = data->shape;
    v.dim_names.assign(v.shape.size(), "");
    v.constant = std::move(data);
    return DefineIndex(std::move(v)).status();
  }

  // A string tensor constant becomes a com.epctx StringConstant node that makes it (the blob holds
  // numeric weights only; the strings travel as the node's attribute, verified with the program).
  Status DefineStringConstant(const onnx::TensorProto& t, const std::string& value_name,
                              const std::string& where) {
    EPCTX_ASSIGN_OR_RETURN(Tensor strings, StringTensorFromProto(t, where));
    IrValue v;
    v.name = value_name;
    v.dtype = DataType::kString;
    v.shape_known = true;
    v.shape = strings.shape();
    v.dim_names.assign(v.shape.size(), "");
    EPCTX_ASSIGN_OR_RETURN(int index, DefineIndex(std::move(v)));
    IrNode node;
    node.name = g_.UniqueName("StringConstant_" + value_name);
    node.op_type = ops::kStringConstant;
    node.domain = ops::kDomain;
    node.outputs.push_back(index);
    IrAttribute value;
    value.name = "value";
    value.type = exec::AttrType::kStrings;
    value.strings.assign(strings.data_as<std::string>(),
                         strings.data_as<std::string>() + strings.element_count());
    IrAttribute shape;
    shape.name = "shape";
    shape.type = exec::AttrType::kInts;
    shape.ints = strings.shape();
    node.attrs.push_back(std::move(value));
    node.attrs.push_back(std::move(shape));
    g_.nodes.push_back(std::move(node));
    g_.DeclareEpctxOpset();
    return Status::Ok();
  }

  ModelContext& ctx_;
  IrGraph& g_;
  GraphImporter* parent_;
  std::unordered_map<std::string, int> by_name_;
  std::unordered_map<std::string, const onnx::TypeProto*> inferred_;
  std::vector<int> captured_outer_;
  std::vector<int> captured_inner_;
};

// Hash64 of the whole file, read a slice at a time with each slice's pages given back after it:
// hashing a model must not make all of it resident in this process (the weights come back one
// at a time as they are packed).
uint64_t HashReleasingPages(const MappedFile& file) {
  constexpr size_t kSlice = 64 << 20;
  const std::span<const std::byte> bytes = file.bytes();
  Hasher64 hasher;
  for (size_t at = 0; at < bytes.size(); at += kSlice) {
    const std::span<const std::byte> slice = bytes.subspan(at, std::min(kSlice, bytes.size() - at));
    hasher.Update(slice);
    file.ReleasePages(slice);
  }
  return hasher.Finish();
}

// The model file itself, when its large inline weights were turned into external data that
// points back into it (inline_weights.h): read through the mapping the import already has.
struct SelfReference {
  std::string location;
  std::shared_ptr<const MappedFile> file;
};

Result<ImportedModel> ImportGraphs(ModelPtr model, const std::string& name,
                                   const std::string& model_dir, const SelfReference* self) {
  ImportedModel out;
  out.ir_version = model->ir_version();
  out.description.domain = model->domain();
  out.description.model_version = model->model_version();
  out.description.doc_string = model->doc_string();
  out.description.graph_doc_string = model->graph().doc_string();
  for (const auto& p : model->metadata_props()) {
    out.description.metadata_props.emplace_back(p.key(), p.value());
  }
  for (const auto& op : model->opset_import()) {
    out.graph.opsets[op.domain() == "ai.onnx" ? "" : op.domain()] = op.version();
  }
  ModelContext ctx{model, name, ExternalDataFiles(model_dir)};
  // A model read from a file (`name` is its path, in `model_dir`).
  if (!model_dir.empty() && DirName(name) == model_dir) ctx.external.AllowRealFolderOf(name);
  if (self != nullptr) ctx.external.Adopt(self->location, self->file);
  GraphImporter importer(ctx, out.graph, nullptr);
  EPCTX_RETURN_IF_ERROR(importer.Import(model->graph(), &out));
  for (const auto& [location, file] : ctx.external.opened()) {
    out.source.external_data.push_back(
        {location, file->bytes().size(), file->identity().mtime_ns, HashReleasingPages(*file)});
  }
  return out;
}

// `bytes`: the serialized model to parse; `self`: set when those are the model file's bytes
// with its inline weights made external (the caller records the source's size and hash).
Result<ImportedModel> Import(std::span<const std::byte> bytes, const std::string& name,
                             const std::string& model_dir, const SelfReference* self,
                             const ImportOptions& options) {
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
  // Before onnx::checker and shape inference, which would crash on some of what it refuses.
  EPCTX_RETURN_IF_ERROR(PrecheckModel(*model, name));
  ApplyFreeDimensionOverrides(*model, options.free_dimension_overrides, name);
  RegisterContribSchemas();
  RegisterNewerOpsetSchemas();
  if (model->functions_size() > 0) {
    return EPCTX_ERROR(kUnsupported,
                       "'{}': model-local functions are not supported (function '{}')", name,
                       model->functions(0).name());
  }
  EPCTX_RETURN_IF_ERROR(RefuseUnknownOnnxOperators(*model, name));
  EPCTX_RETURN_IF_ERROR(RunChecker(*model, name, model_dir));
  EPCTX_RETURN_IF_ERROR(RunShapeInference(*model, name));
  auto has_kernel = [](const std::string& domain, const std::string& op, int64_t opset) {
    return exec::KernelRegistry::Global().Supports(domain, op, opset);
  };
  // Function bodies may call further functions whose bodies depend on input types, which are
  // known only after shape inference over the expanded graph: expand in rounds.
  // A node refused in one round may expand in a later one: refusals are logged at the end, once.
  std::map<std::string, std::string> refusals;
  for (int round = 0; round < kMaxInlineRounds; ++round) {
    EPCTX_ASSIGN_OR_RETURN(int inlined, InlineFunctionOps(*model, has_kernel, name, &refusals));
    if (inlined == 0) break;
    EPCTX_RETURN_IF_ERROR(RunShapeInference(*model, name));
  }
  for (const auto& [node, refusal] : refusals) Logger().warn("{}", refusal);
  EPCTX_ASSIGN_OR_RETURN(ImportedModel out, ImportGraphs(model, name, model_dir, self));
  InferSymbolicShapes(out.graph);
  return out;
}

}  // namespace

Result<ImportedModel> ImportModelFile(const std::string& path, const ImportOptions& options) {
  EPCTX_ASSIGN_OR_RETURN(MappedFile mapped, MappedFile::Open(path));
  auto file = std::make_shared<const MappedFile>(std::move(mapped));
  const std::span<const std::byte> bytes = file->bytes();
  // Models of 2 GiB or more are refused by Import as they are.
  std::optional<std::string> parsed;
  SelfReference self{BaseName(path), file};
  if (bytes.size() < static_cast<size_t>(INT_MAX)) {
    parsed = ExternalizeInlineWeights(bytes, self.location);
  }
  EPCTX_ASSIGN_OR_RETURN(ImportedModel out,
                         parsed.has_value() ? Import(std::as_bytes(std::span<const char>(*parsed)),
                                                     path, DirName(path), &self, options)
                                            : Import(bytes, path, DirName(path), nullptr, options));
  parsed.reset();
  out.source.path = path;
  out.source.mtime_ns = file->identity().mtime_ns;
  out.source.size = bytes.size();
  out.source.hash = HashReleasingPages(*file);
  return out;
}

Result<ImportedModel> ImportModelBytes(std::span<const std::byte> bytes, const std::string& name,
                                       const std::string& model_dir, const ImportOptions& options) {
  EPCTX_ASSIGN_OR_RETURN(ImportedModel out, Import(bytes, name, model_dir, nullptr, options));
  out.source.size = bytes.size();
  out.source.hash = Hash64(bytes);
  return out;
}

}  // namespace epctx::compile
