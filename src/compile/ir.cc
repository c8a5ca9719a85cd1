#include "compile/ir.h"

#include <cstring>

#include "exec/kernels/epctx_ops.h"
#include "util/file.h"
#include "util/status_macros.h"

namespace epctx::compile {

std::shared_ptr<ConstantData> ConstantData::FromTensor(const Tensor& t, uint32_t layout) {
  auto c = std::make_shared<ConstantData>();
  c->dtype = t.dtype();
  c->shape = t.shape();
  auto storage = std::make_shared<std::vector<std::byte>>(t.byte_size());
  if (t.byte_size() > 0) std::memcpy(storage->data(), t.data(), t.byte_size());
  c->bytes = std::span<const std::byte>(storage->data(), storage->size());
  c->owner = storage;
  c->layout = layout;
  return c;
}

void ConstantData::ReleasePages() const {
  if (file != nullptr) file->ReleasePages(bytes);
}

std::shared_ptr<ConstantData> ConstantData::Deferred(DataType dtype, std::vector<int64_t> shape,
                                                     uint32_t layout,
                                                     std::function<Result<Tensor>()> make) {
  auto c = std::make_shared<ConstantData>();
  c->dtype = dtype;
  c->shape = std::move(shape);
  c->layout = layout;
  c->make = std::move(make);
  return c;
}

Result<std::shared_ptr<const ConstantData>> Materialize(std::shared_ptr<const ConstantData> c) {
  if (!c->deferred()) return c;
  EPCTX_ASSIGN_OR_RETURN(Tensor made, c->make());
  if (made.dtype() != c->dtype || made.shape() != c->shape) {
    return EPCTX_ERROR(kInternal, "a packed weight was planned as {} {} but packed as {} {}",
                       DataTypeName(c->dtype), ShapeToString(c->shape), DataTypeName(made.dtype()),
                       ShapeToString(made.shape()));
  }
  auto out = std::make_shared<ConstantData>();
  auto holder = std::make_shared<Tensor>(std::move(made));
  out->dtype = c->dtype;
  out->shape = c->shape;
  out->layout = c->layout;
  out->required_cpu_features = c->required_cpu_features;
  out->bytes = std::span<const std::byte>(static_cast<const std::byte*>(holder->data()),
                                          holder->byte_size());
  out->owner = std::move(holder);
  return std::shared_ptr<const ConstantData>(std::move(out));
}

template <typename T>
std::shared_ptr<ConstantData> ConstantData::FromVector(DataType dtype, std::vector<int64_t> shape,
                                                       std::vector<T> values) {
  auto c = std::make_shared<ConstantData>();
  auto storage = std::make_shared<std::vector<T>>(std::move(values));
  c->dtype = dtype;
  c->shape = std::move(shape);
  c->bytes = std::as_bytes(std::span<const T>(*storage));
  c->owner = storage;
  return c;
}

template std::shared_ptr<ConstantData> ConstantData::FromVector<float>(DataType,
                                                                       std::vector<int64_t>,
                                                                       std::vector<float>);
template std::shared_ptr<ConstantData> ConstantData::FromVector<int64_t>(DataType,
                                                                         std::vector<int64_t>,
                                                                         std::vector<int64_t>);
template std::shared_ptr<ConstantData> ConstantData::FromVector<int32_t>(DataType,
                                                                         std::vector<int64_t>,
                                                                         std::vector<int32_t>);
template std::shared_ptr<ConstantData> ConstantData::FromVector<uint8_t>(DataType,
                                                                         std::vector<int64_t>,
                                                                         std::vector<uint8_t>);
template std::shared_ptr<ConstantData> ConstantData::FromVector<int8_t>(DataType,
                                                                        std::vector<int64_t>,
                                                                        std::vector<int8_t>);
template std::shared_ptr<ConstantData> ConstantData::FromVector<std::byte>(DataType,
                                                                           std::vector<int64_t>,
                                                                           std::vector<std::byte>);

bool IrValue::fully_static() const {
  if (!shape_known) return false;
  for (int64_t d : shape) {
    if (d < 0) return false;
  }
  return true;
}

bool IrNode::has_bodies() const {
  for (const IrAttribute& a : attrs) {
    if (a.body) return true;
  }
  return false;
}

const IrAttribute* IrNode::FindAttr(std::string_view attr_name) const {
  for (const IrAttribute& a : attrs) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

IrAttribute* IrNode::FindAttr(std::string_view attr_name) {
  for (IrAttribute& a : attrs) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

namespace {

// Attribute `attr_name` of `n`, emptied and typed `type` (appended when it is not there).
IrAttribute& ResetAttr(IrNode& n, std::string_view attr_name, exec::AttrType type) {
  IrAttribute* a = n.FindAttr(attr_name);
  if (a == nullptr) {
    n.attrs.emplace_back();
    a = &n.attrs.back();
  }
  *a = IrAttribute();
  a->name = std::string(attr_name);
  a->type = type;
  return *a;
}

}  // namespace

void IrNode::SetInt(std::string_view attr_name, int64_t value) {
  ResetAttr(*this, attr_name, exec::AttrType::kInt).i = value;
}

void IrNode::SetFloat(std::string_view attr_name, float value) {
  ResetAttr(*this, attr_name, exec::AttrType::kFloat).f = value;
}

void IrNode::SetString(std::string_view attr_name, std::string value) {
  ResetAttr(*this, attr_name, exec::AttrType::kString).s = std::move(value);
}

void IrNode::SetInts(std::string_view attr_name, std::vector<int64_t> values) {
  ResetAttr(*this, attr_name, exec::AttrType::kInts).ints = std::move(values);
}

void IrNode::SetFloats(std::string_view attr_name, std::vector<float> values) {
  ResetAttr(*this, attr_name, exec::AttrType::kFloats).floats = std::move(values);
}

void IrNode::RemoveAttr(std::string_view attr_name) {
  std::erase_if(attrs, [&](const IrAttribute& a) { return a.name == attr_name; });
}

int64_t IrGraph::OpsetOf(const std::string& domain) const {
  auto it = opsets.find(domain);
  if (it != opsets.end()) return it->second;
  if (domain == "ai.onnx") return OpsetOf("");
  return 1;
}

void IrGraph::DeclareEpctxOpset() {
  opsets[std::string(ops::kDomain)] = ops::kOpsetVersion;
}

int IrGraph::AddValue(IrValue value) {
  name_counts_[value.name]++;
  values.push_back(std::move(value));
  return static_cast<int>(values.size() - 1);
}

std::string IrGraph::UniqueName(const std::string& hint) {
  if (name_counts_.empty()) {
    for (const IrValue& v : values) name_counts_[v.name]++;
  }
  std::string name = hint;
  for (int n = 1; name_counts_.count(name); ++n) name = hint + "_" + std::to_string(n);
  return name;
}

int IrGraph::AddConstant(const std::string& hint, std::shared_ptr<ConstantData> data) {
  IrValue v;
  v.name = UniqueName(hint);
  v.dtype = data->dtype;
  v.shape_known = true;
  v.shape = data->shape;
  v.dim_names.assign(v.shape.size(), "");
  v.constant = std::move(data);
  return AddValue(std::move(v));
}

exec::Attributes IrGraph::AttributesOf(const IrNode& node) const {
  exec::Attributes attrs;
  for (const IrAttribute& a : node.attrs) {
    exec::AttributeValue v;
    v.name = a.name;
    v.type = a.type;
    v.i = a.i;
    v.f = a.f;
    v.s = a.s;
    v.ints = a.ints;
    v.floats = a.floats;
    for (const std::string& s : a.strings) v.strings.push_back(s);
    if (a.tensor) v.tensor = a.tensor->AsTensor();
    v.graph = a.graph;
    attrs.Add(std::move(v));
  }
  return attrs;
}

exec::NodeInfo IrGraph::NodeInfoOf(const IrNode& node, const exec::Attributes& attrs,
                                   std::vector<Tensor>& constant_views) const {
  exec::NodeInfo info;
  info.name = node.name;
  info.op_type = node.op_type;
  info.domain = node.domain;
  info.opset = OpsetOf(node.domain);
  info.attrs = &attrs;
  constant_views.clear();
  constant_views.reserve(node.inputs.size());
  auto describe = [&](int index, bool is_input) {
    exec::ValueDesc d;
    if (index < 0) {
      d.present = false;
      return d;
    }
    const IrValue& v = values[static_cast<size_t>(index)];
    d.kind = v.kind;
    d.optional = v.optional;
    d.dtype = v.dtype;
    d.shape_known = v.shape_known;
    d.shape = v.shape;
    if (is_input && v.constant) {
      constant_views.push_back(v.constant->AsTensor());
      d.constant = &constant_views.back();
    }
    return d;
  };
  for (int i : node.inputs) info.inputs.push_back(describe(i, true));
  for (int o : node.outputs) info.outputs.push_back(describe(o, false));
  info.implicit_inputs = static_cast<size_t>(node.implicit_inputs);
  return info;
}

std::vector<int> Producers(const IrGraph& graph) {
  std::vector<int> producer(graph.values.size(), -1);
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    for (int o : graph.nodes[k].outputs) {
      if (o >= 0) producer[static_cast<size_t>(o)] = static_cast<int>(k);
    }
  }
  return producer;
}

std::vector<int> CountUses(const IrGraph& graph) {
  std::vector<int> uses(graph.values.size(), 0);
  for (const IrNode& n : graph.nodes) {
    for (int i : n.inputs) {
      if (i >= 0) uses[static_cast<size_t>(i)]++;
    }
  }
  for (int o : graph.outputs) uses[static_cast<size_t>(o)]++;
  return uses;
}

}  // namespace epctx::compile
