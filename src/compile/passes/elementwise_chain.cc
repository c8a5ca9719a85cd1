#include "compile/passes/elementwise_chain.h"

#include <algorithm>
#include <cmath>

#include "compile/passes/passes.h"

namespace epctx::compile {
namespace {

using exec::kernels::onednn::PostOp;
using exec::kernels::onednn::PostOpKind;

// How close a chain's outputs must be to the activation's, relative to 1 + |f(x)|: float32's
// rounding in the chain's steps; a float16 model's chain, float16's (the nodes' own precision).
constexpr double kChainTolerance = 2e-5;
constexpr double kFloat16ChainTolerance = 1e-3;

// How far past the producer a chain may reach, and how long it may be.
constexpr size_t kMaxChainNodes = 16;
constexpr size_t kSearchWindow = 48;

bool IsElementwise(const IrNode& n) {
  if (!n.domain.empty() || n.outputs.size() != 1 || n.has_bodies()) return false;
  for (std::string_view op :
       {"Add",         "Sub",       "Mul", "Div",  "Pow",      "Erf", "Tanh", "Sigmoid",
        "Relu",        "Clip",      "Max", "Min",  "Neg",      "Exp", "Sqrt", "Reciprocal",
        "HardSigmoid", "HardSwish", "Abs", "Gelu", "Softplus", "Log"}) {
    if (n.op_type == op) return true;
  }
  return false;
}

bool IsScalarFloatConstant(const IrGraph& g, int v) {
  if (v < 0) return true;  // an omitted optional input
  const IrValue& x = g.values[static_cast<size_t>(v)];
  return x.constant && x.constant->dtype == DataType::kFloat32 &&
         x.constant->bytes.size() == sizeof(float);
}

// Runs the chain on `xs` (as a 1-D tensor standing for the chain's input); nullopt when a
// kernel refuses.
std::optional<std::vector<float>> Evaluate(const IrGraph& g, const std::vector<size_t>& nodes,
                                           int input, int output, const std::vector<float>& xs) {
  auto in = Tensor::Allocate(DataType::kFloat32, {static_cast<int64_t>(xs.size())});
  if (!in.ok()) return std::nullopt;
  std::copy(xs.begin(), xs.end(), in->mutable_data_as<float>());
  std::vector<std::pair<int, Tensor>> values{{input, *in}};
  auto find = [&](int v) -> const Tensor* {
    for (auto& [id, t] : values) {
      if (id == v) return &t;
    }
    return nullptr;
  };
  for (size_t k : nodes) {
    const IrNode& n = g.nodes[k];
    exec::Attributes attrs = g.AttributesOf(n);
    std::vector<Tensor> views;
    exec::NodeInfo info = g.NodeInfoOf(n, attrs, views);
    // The chain runs on a 1-D sample, not the real shape.
    for (exec::ValueDesc& d : info.inputs) d.shape_known = d.constant != nullptr && d.shape_known;
    for (exec::ValueDesc& d : info.outputs) d.shape_known = false;
    std::vector<Tensor> constants;
    constants.reserve(n.inputs.size());
    std::vector<const Tensor*> ins;
    for (int i : n.inputs) {
      if (i < 0) {
        ins.push_back(nullptr);
      } else if (const Tensor* t = find(i)) {
        ins.push_back(t);
      } else {
        constants.push_back(g.values[static_cast<size_t>(i)].constant->AsTensor());
        ins.push_back(&constants.back());
      }
    }
    auto outs = exec::RunNodeOnce(info, ins);
    if (!outs.ok() || outs->size() != 1) return std::nullopt;
    values.emplace_back(n.outputs[0], (*outs)[0]);
  }
  const Tensor* out = find(output);
  if (out == nullptr || out->dtype() != DataType::kFloat32 ||
      out->element_count() != static_cast<int64_t>(xs.size())) {
    return std::nullopt;
  }
  return std::vector<float>(out->data_as<float>(), out->data_as<float>() + xs.size());
}

double Reference(PostOpKind kind, double x) {
  switch (kind) {
    case PostOpKind::kGeluErf:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case PostOpKind::kGeluTanh:
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case PostOpKind::kSwish:
      return x / (1 + std::exp(-x));
    case PostOpKind::kHardSwish:
      return x * std::clamp(x / 6 + 0.5, 0.0, 1.0);
    case PostOpKind::kSigmoid:
      return 1 / (1 + std::exp(-x));
    case PostOpKind::kTanh:
      return std::tanh(x);
    case PostOpKind::kMish:
      return x * std::tanh(std::log1p(std::exp(x)));
    case PostOpKind::kRelu:
      return std::max(x, 0.0);
    default:
      return NAN;
  }
}

// Whether every constant the chain's nodes read is a float16 value (a lifted float16 model's).
bool ReadsFloat16Constants(const IrGraph& g, const std::vector<size_t>& nodes, int input) {
  bool any = false;
  for (size_t k : nodes) {
    for (int i : g.nodes[k].inputs) {
      if (i < 0 || i == input) continue;
      const IrValue& v = g.values[static_cast<size_t>(i)];
      if (!v.constant) continue;
      if (!v.constant->float16_values) return false;
      any = true;
    }
  }
  return any;
}

// `tolerance`: relative to 1 + |f(x)|.
std::optional<PostOp> Identify(const std::vector<float>& xs, const std::vector<float>& ys,
                               double tolerance) {
  for (PostOpKind kind :
       {PostOpKind::kGeluErf, PostOpKind::kGeluTanh, PostOpKind::kSwish, PostOpKind::kHardSwish,
        PostOpKind::kSigmoid, PostOpKind::kTanh, PostOpKind::kRelu, PostOpKind::kMish}) {
    bool match = true;
    for (size_t i = 0; i < xs.size() && match; ++i) {
      const double ref = Reference(kind, xs[i]);
      match = std::abs(ys[i] - ref) <= tolerance * (1 + std::abs(ref));
    }
    if (match) return PostOp{kind, kind == PostOpKind::kSwish ? 1.0f : 0.0f, 0.0f};
  }
  return std::nullopt;
}

}  // namespace

std::optional<ElementwiseChain> FindElementwiseChain(const IrGraph& graph, size_t producer,
                                                     int value, const std::vector<bool>& dead) {
  if (IsGraphOutput(graph, value)) return std::nullopt;
  std::vector<int> uses = CountUses(graph);
  // Grow the chain in node order; remember each prefix that is closed (every value but the last
  // is read only inside it).
  std::vector<size_t> nodes;
  std::vector<int> inside{value};
  std::vector<std::pair<size_t, int>> closed;  // (chain length, last value)
  std::vector<int> reads(graph.values.size(), 0);
  const size_t end = std::min(graph.nodes.size(), producer + 1 + kSearchWindow);
  for (size_t k = producer + 1; k < end && nodes.size() < kMaxChainNodes; ++k) {
    const IrNode& n = graph.nodes[k];
    if (dead[k] || !IsElementwise(n)) continue;
    bool reads_chain = false, other = false;
    for (int i : n.inputs) {
      if (std::find(inside.begin(), inside.end(), i) != inside.end()) {
        reads_chain = true;
      } else if (!IsScalarFloatConstant(graph, i)) {
        other = true;
      }
    }
    if (!reads_chain || other) continue;
    const int out = n.outputs[0];
    if (out < 0 || graph.values[static_cast<size_t>(out)].dtype != DataType::kFloat32) break;
    nodes.push_back(k);
    for (int i : n.inputs) {
      if (i >= 0) reads[static_cast<size_t>(i)]++;
    }
    inside.push_back(out);
    bool is_closed = true;
    for (int v : inside) {
      if (v == out) continue;
      if (reads[static_cast<size_t>(v)] != uses[static_cast<size_t>(v)] ||
          IsGraphOutput(graph, v)) {
        is_closed = false;
        break;
      }
    }
    if (is_closed) closed.emplace_back(nodes.size(), out);
  }
  std::vector<float> xs;
  for (int i = -80; i <= 80; ++i) xs.push_back(static_cast<float>(i) * 0.1f);
  for (auto it = closed.rbegin(); it != closed.rend(); ++it) {
    std::vector<size_t> prefix(nodes.begin(), nodes.begin() + static_cast<long>(it->first));
    std::optional<std::vector<float>> ys = Evaluate(graph, prefix, value, it->second, xs);
    if (!ys) continue;
    // float32 arithmetic on the chain's constants; a float16 model's constants carry float16's
    // rounding (its own arithmetic is no closer: 2^-11 relative).
    const double tolerance =
        ReadsFloat16Constants(graph, prefix, value) ? kFloat16ChainTolerance : kChainTolerance;
    if (std::optional<PostOp> f = Identify(xs, *ys, tolerance)) {
      return ElementwiseChain{*f, std::move(prefix), it->second};
    }
  }
  return std::nullopt;
}

}  // namespace epctx::compile
