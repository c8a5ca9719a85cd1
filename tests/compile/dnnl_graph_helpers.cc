#include "compile/dnnl_graph_helpers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "compile/contrib/contrib_schemas.h"
#include "compile/onnx_import.h"
#include "compile/onnx_shape_fixes.h"
#include "compile/passes/passes.h"
#include "exec/kernel.h"
#include "exec/kernels/onednn/isa.h"

namespace epctx::testing::dnnl {

onnx::AttributeProto AttrInt(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

onnx::AttributeProto AttrInts(const std::string& name, std::vector<int64_t> v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return a;
}

onnx::AttributeProto AttrFloat(const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}

onnx::AttributeProto AttrString(const std::string& name, const std::string& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(v);
  return a;
}

ModelBuilder::ModelBuilder(uint32_t seed, int64_t opset) : rng_(seed) {
  model_.set_ir_version(8);
  auto* op = model_.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  model_.mutable_graph()->set_name("dnnl_test");
}

std::string ModelBuilder::NewName() {
  std::string name = "v";
  name += std::to_string(next_++);
  return name;
}

std::string ModelBuilder::Input(const std::string& name, const std::vector<int64_t>& shape,
                                const std::vector<std::string>& symbols, int elem_type) {
  auto* in = model_.mutable_graph()->add_input();
  in->set_name(name);
  auto* t = in->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  auto* s = t->mutable_shape();
  for (size_t i = 0; i < shape.size(); ++i) {
    auto* d = s->add_dim();
    if (shape[i] >= 0) {
      d->set_dim_value(shape[i]);
    } else {
      std::string symbol = "d";
      symbol += std::to_string(i);
      d->set_dim_param(i < symbols.size() ? symbols[i] : symbol);
    }
  }
  return name;
}

std::string ModelBuilder::Weight(const std::vector<int64_t>& shape, float lo, float hi) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng_);
  return Constant(shape, v);
}

std::string ModelBuilder::Constant(const std::vector<int64_t>& shape,
                                   const std::vector<float>& values) {
  auto* t = model_.mutable_graph()->add_initializer();
  const std::string name = NewName();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : shape) t->add_dims(d);
  t->set_raw_data(values.data(), values.size() * sizeof(float));
  return name;
}

std::string ModelBuilder::Int64Constant(const std::vector<int64_t>& shape,
                                        const std::vector<int64_t>& values) {
  auto* t = model_.mutable_graph()->add_initializer();
  const std::string name = NewName();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : shape) t->add_dims(d);
  t->set_raw_data(values.data(), values.size() * sizeof(int64_t));
  return name;
}

std::string ModelBuilder::Node(const std::string& op, const std::vector<std::string>& inputs,
                               const std::vector<onnx::AttributeProto>& attrs) {
  auto* n = model_.mutable_graph()->add_node();
  n->set_op_type(op);
  std::string node_name = "n";
  node_name += std::to_string(model_.graph().node_size());
  node_name += "_";
  node_name += op;
  n->set_name(node_name);
  for (const std::string& i : inputs) n->add_input(i);
  const std::string out = NewName();
  n->add_output(out);
  for (const onnx::AttributeProto& a : attrs) *n->add_attribute() = a;
  return out;
}

std::string ModelBuilder::Conv(const std::string& x, int64_t c, int64_t m,
                               const std::vector<int64_t>& kernel,
                               std::vector<onnx::AttributeProto> attrs, bool bias, int64_t group) {
  std::vector<int64_t> w_shape{m, c / group};
  int64_t fan_in = c / group;
  for (int64_t k : kernel) {
    w_shape.push_back(k);
    fan_in *= k;
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(fan_in));
  std::vector<std::string> inputs{x, Weight(w_shape, -scale, scale)};
  if (bias) inputs.push_back(Weight({m}, -0.2f, 0.2f));
  attrs.push_back(AttrInts("kernel_shape", kernel));
  if (group != 1) attrs.push_back(AttrInt("group", group));
  return Node("Conv", inputs, attrs);
}

void ModelBuilder::Output(const std::string& value, int rank) {
  auto* out = model_.mutable_graph()->add_output();
  out->set_name(value);
  auto* t = out->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (int i = 0; i < rank; ++i) {
    std::string symbol = value;
    symbol += "_d";
    symbol += std::to_string(i);
    t->mutable_shape()->add_dim()->set_dim_param(symbol);
  }
}

std::string ModelBuilder::Serialized() const {
  // The contrib ops' schemas and the corrections to onnx's inference, which the import installs,
  // are needed by this inference too (a test run alone would otherwise declare contrib outputs
  // without a shape, and a pool in ceil mode with onnx 1.12's size).
  compile::RegisterContribSchemas();
  compile::InstallShapeInferenceFixes();
  onnx::ModelProto inferred = model_;
  onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance());
  onnx::ModelProto out = model_;
  for (int i = 0; i < out.graph().output_size(); ++i) {
    if (!out.graph().output(i).type().tensor_type().has_shape()) {
      *out.mutable_graph()->mutable_output(i) = inferred.graph().output(i);
    }
  }
  return out.SerializeAsString();
}

Result<compile::IrGraph> ImportGraph(const ModelBuilder& builder) {
  const std::string bytes = builder.Serialized();
  auto imported = compile::ImportModelBytes(
      std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), "dnnl_test.onnx", "");
  if (!imported.ok()) return imported.status();
  return std::move(imported->graph);
}

compile::IrGraph OptimiseAndCompareWithin(const ModelBuilder& builder,
                                          const std::vector<Tensor>& inputs, double rel,
                                          const std::string& what, int threads) {
  auto reference = ImportGraph(builder);
  EXPECT_TRUE(reference.ok()) << reference.status().ToString();
  if (!reference.ok()) return {};
  compile::IrGraph optimised = *reference;
  auto stats = compile::RunAllPasses(optimised);
  EXPECT_TRUE(stats.ok()) << what << ": " << stats.status().ToString();
  const std::vector<Tensor> want = Evaluate(*reference, inputs);
  const std::vector<Tensor> got = Evaluate(optimised, inputs, threads);
  EXPECT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    ExpectMatches(got[i], want[i], rel, Cat(what, " output ", i));
  }
  return optimised;
}

std::vector<Tensor> Evaluate(const compile::IrGraph& g, const std::vector<Tensor>& inputs,
                             int threads) {
  std::vector<Tensor> values(g.values.size());
  for (size_t i = 0; i < g.values.size(); ++i) {
    // Packed weights are made when the blob is written; here, when the graph first runs.
    if (g.values[i].constant) {
      auto c = compile::Materialize(g.values[i].constant);
      EXPECT_TRUE(c.ok()) << c.status().ToString();
      if (c.ok()) values[i] = (*c)->AsTensor();
    }
  }
  EXPECT_EQ(inputs.size(), g.inputs.size());
  for (size_t i = 0; i < g.inputs.size() && i < inputs.size(); ++i) {
    values[static_cast<size_t>(g.inputs[i])] = inputs[i];
  }
  for (const compile::IrNode& n : g.nodes) {
    exec::Attributes attrs = g.AttributesOf(n);
    std::vector<Tensor> views;
    exec::NodeInfo info = g.NodeInfoOf(n, attrs, views);
    std::vector<const Tensor*> ins;
    for (int i : n.inputs) ins.push_back(i < 0 ? nullptr : &values[static_cast<size_t>(i)]);
    auto outs = exec::RunNodeOnce(info, ins, threads);
    if (!outs.ok()) {
      ADD_FAILURE() << n.domain << ":" << n.op_type << " node '" << n.name
                    << "': " << outs.status().ToString();
      return {};
    }
    for (size_t o = 0; o < n.outputs.size() && o < outs->size(); ++o) {
      if (n.outputs[o] >= 0) values[static_cast<size_t>(n.outputs[o])] = (*outs)[o];
    }
  }
  std::vector<Tensor> out;
  for (int o : g.outputs) out.push_back(values[static_cast<size_t>(o)]);
  return out;
}

Tensor RandomTensor(const std::vector<int64_t>& shape, std::mt19937& rng) {
  auto t = Tensor::Allocate(DataType::kFloat32, shape);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  std::uniform_real_distribution<float> dist(-1, 1);
  float* p = t->mutable_data_as<float>();
  for (int64_t i = 0; i < t->element_count(); ++i) p[i] = dist(rng);
  return *t;
}

void ExpectMatches(const Tensor& actual, const Tensor& reference, double rel,
                   const std::string& what) {
  ASSERT_EQ(reference.dtype(), DataType::kFloat32) << what;
  ASSERT_EQ(actual.dtype(), DataType::kFloat32) << what;
  ASSERT_EQ(actual.shape(), reference.shape()) << what;
  const float* a = actual.data_as<float>();
  const float* r = reference.data_as<float>();
  const int64_t n = reference.element_count();
  ASSERT_GT(n, 0) << what;
  double scale = 0;
  for (int64_t i = 0; i < n; ++i) scale = std::max(scale, std::fabs(double{r[i]}));
  ASSERT_GT(scale, 0) << what << ": the reference is all zeros; the case checks nothing";
  const double tol = rel * scale;
  int64_t bad = 0, first = -1;
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(double{a[i]} - double{r[i]});
    if (!(d <= tol)) {
      if (first < 0) first = i;
      ++bad;
      worst = std::isnan(d) ? INFINITY : std::max(worst, d);
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << n << " elements off by more than " << tol
                    << " (" << rel << " x max|ref| " << scale << "); worst " << worst
                    << "; first at " << first << ": got " << (first >= 0 ? a[first] : 0.0f)
                    << ", expected " << (first >= 0 ? r[first] : 0.0f);
}

std::vector<std::string> OpList(const compile::IrGraph& g) {
  std::vector<std::string> ops;
  for (const compile::IrNode& n : g.nodes) {
    ops.push_back(n.domain.empty() ? n.op_type : n.domain + ":" + n.op_type);
  }
  return ops;
}

int CountOps(const compile::IrGraph& g, std::string_view op_type) {
  return static_cast<int>(
      std::count_if(g.nodes.begin(), g.nodes.end(),
                    [&](const compile::IrNode& n) { return n.op_type == op_type; }));
}

namespace {

bool IsEdgeReorder(const compile::IrGraph& g, const compile::IrNode& n) {
  if (n.op_type != "Reorder" || n.inputs.empty() || n.outputs.empty()) return false;
  const auto has = [](const std::vector<int>& values, int v) {
    return std::find(values.begin(), values.end(), v) != values.end();
  };
  return has(g.inputs, n.inputs[0]) || has(g.outputs, n.outputs[0]);
}

}  // namespace

std::vector<std::string> OpListInside(const compile::IrGraph& g) {
  std::vector<std::string> ops;
  for (const compile::IrNode& n : g.nodes) {
    if (IsEdgeReorder(g, n)) continue;
    ops.push_back(n.domain.empty() ? n.op_type : n.domain + ":" + n.op_type);
  }
  return ops;
}

int CountInnerReorders(const compile::IrGraph& g) {
  return static_cast<int>(std::count_if(
      g.nodes.begin(), g.nodes.end(),
      [&](const compile::IrNode& n) { return n.op_type == "Reorder" && !IsEdgeReorder(g, n); }));
}

const compile::IrNode* Producer(const compile::IrGraph& g, int value) {
  for (const compile::IrNode& n : g.nodes) {
    if (std::find(n.outputs.begin(), n.outputs.end(), value) != n.outputs.end()) return &n;
  }
  return nullptr;
}

int64_t PlannedBlockedLayout() {
  return static_cast<int64_t>(exec::kernels::onednn::PlannedBlockedLayout());
}

int64_t PlannedChannelBlock() {
  return exec::kernels::onednn::ChannelBlock(exec::kernels::onednn::PlannedBlockedLayout());
}

int64_t IntAttrOr(const compile::IrNode& node, std::string_view name, int64_t fallback) {
  const compile::IrAttribute* a = node.FindAttr(name);
  return a != nullptr ? a->i : fallback;
}

std::vector<int64_t> IntsAttr(const compile::IrNode& node, std::string_view name) {
  const compile::IrAttribute* a = node.FindAttr(name);
  return a != nullptr ? a->ints : std::vector<int64_t>{};
}

std::vector<float> FloatsAttr(const compile::IrNode& node, std::string_view name) {
  const compile::IrAttribute* a = node.FindAttr(name);
  return a != nullptr ? a->floats : std::vector<float>{};
}

}  // namespace epctx::testing::dnnl
