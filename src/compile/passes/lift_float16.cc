// Float16 models run in float32: every float16 value inside the graph becomes float32 (constants
// converted, Cast targets and typed attributes changed), and only the graph's own float16 inputs
// and outputs stay float16, behind one Cast each, and embedding tables, whose Gather is followed
// by a Cast of the rows it picks. This is what ONNX Runtime's CPU provider does
// for the operators it has no float16 kernel for (it inserts Casts around them); here it is done
// once for the whole graph, so the float32 kernels (oneDNN's included) run every node and no Cast
// is left between two of them. Results are float32's, at least as precise as float16's: a Cast
// to float16 inside the graph no longer rounds (it becomes a Cast to float32, which
// EliminateIdentityLike removes).
#include <cstring>
#include <span>

#include "compile/passes/passes.h"
#include "exec/kernels/elementwise/element_types.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

constexpr int64_t kOnnxFloat = 1;
constexpr int64_t kOnnxFloat16 = 10;

std::vector<float> Float32Values(std::span<const std::byte> bytes) {
  const size_t count = bytes.size() / sizeof(uint16_t);
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    exec::kernels::elementwise::Half h;
    std::memcpy(&h.bits, bytes.data() + i * sizeof(uint16_t), sizeof h.bits);
    values[i] = exec::kernels::elementwise::HalfToFloat(h);
  }
  return values;
}

std::shared_ptr<ConstantData> ToFloat32(const ConstantData& c) {
  auto out = ConstantData::FromVector<float>(DataType::kFloat32, c.shape, Float32Values(c.bytes));
  out->layout = c.layout;
  out->float16_values = true;
  return out;
}

// Float16 weights of at least this many bytes that only matmuls read, as their weight, are
// converted when the blob is written (a deferred constant, ir.h), one at a time, and their source
// pages given back: converted here, a float16 LLM's weights would all be held in float32 at
// once, twice the model's bytes (a 7B model: 28 GB).
constexpr size_t kDeferredLiftMinBytes = 64 * 1024;

std::shared_ptr<ConstantData> DeferredFloat32(std::shared_ptr<const ConstantData> c) {
  const std::vector<int64_t> shape = c->shape;
  const uint32_t layout = c->layout;
  auto make = [source = std::move(c)]() -> Result<Tensor> {
    EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const ConstantData> from, Materialize(source));
    auto values = std::make_shared<std::vector<float>>(Float32Values(from->bytes));
    from->ReleasePages();
    return Tensor::View(DataType::kFloat32, from->shape, values->data(), values);
  };
  std::shared_ptr<ConstantData> lifted =
      ConstantData::Deferred(DataType::kFloat32, shape, layout, std::move(make));
  lifted->float16_values = true;
  return lifted;
}

// Values of `graph` that every node reading them reads as `takes(node, input index)` says, and
// no graph output is. None in a graph with subgraphs, whose bodies may read outer values too.
template <typename Takes>
std::vector<bool> ReadOnlyAs(const IrGraph& graph, Takes takes) {
  std::vector<bool> only(graph.values.size(), false);
  std::vector<bool> other_reader(graph.values.size(), false);
  for (const IrNode& n : graph.nodes) {
    if (n.has_bodies()) return std::vector<bool>(graph.values.size(), false);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const int in = n.inputs[i];
      if (in >= 0) (takes(n, i) ? only : other_reader)[static_cast<size_t>(in)] = true;
    }
  }
  for (int out : graph.outputs) other_reader[static_cast<size_t>(out)] = true;
  for (size_t i = 0; i < only.size(); ++i) {
    if (other_reader[i]) only[i] = false;
  }
  return only;
}

// Values only MatMul and Gemm nodes read, as their weight (input 1): the packing reads them only
// when the blob is written.
std::vector<bool> ReadOnlyAsMatMulWeight(const IrGraph& graph) {
  return ReadOnlyAs(graph, [](const IrNode& n, size_t i) {
    return i == 1 && n.domain.empty() && (n.op_type == "MatMul" || n.op_type == "Gemm");
  });
}

// Values only Gather nodes read, as their data (input 0): embedding tables.
std::vector<bool> ReadOnlyAsGatherData(const IrGraph& graph) {
  return ReadOnlyAs(graph, [](const IrNode& n, size_t i) {
    return i == 0 && n.domain.empty() && n.op_type == "Gather";
  });
}

// A new value like `like` (a copy: adding values moves the graph's), of `dtype`.
int AddCastValue(IrGraph& graph, IrValue like, DataType dtype, const std::string& suffix) {
  IrValue v = std::move(like);
  v.name = graph.UniqueName(like.name + suffix);
  v.dtype = dtype;
  v.constant = nullptr;
  return graph.AddValue(std::move(v));
}

IrNode CastNode(IrGraph& graph, const std::string& name, int from, int to, int64_t onnx_type) {
  IrNode cast;
  cast.name = graph.UniqueName(name);
  cast.op_type = "Cast";
  cast.inputs = {from};
  cast.outputs = {to};
  IrAttribute a;
  a.name = "to";
  a.type = exec::AttrType::kInt;
  a.i = onnx_type;
  cast.attrs.push_back(a);
  return cast;
}

// Changes a node's own float16 choices (Cast's target, the value of ConstantOfShape, the dtype
// of EyeLike and the random generators) to float32.
int LiftAttributes(IrNode& n) {
  int changed = 0;
  for (IrAttribute& a : n.attrs) {
    if (a.type == exec::AttrType::kInt && a.i == kOnnxFloat16 &&
        ((n.op_type == "Cast" && a.name == "to") || a.name == "dtype")) {
      a.i = kOnnxFloat;
      ++changed;
    } else if (a.type == exec::AttrType::kTensor && a.tensor &&
               a.tensor->dtype == DataType::kFloat16) {
      a.tensor = ToFloat32(*a.tensor);
      ++changed;
    }
  }
  return changed;
}

// A float16 Clip (from opset 11, bounds as inputs) without a bound clamps to float16's range
// (ONNX Runtime's default bounds are the type's lowest and largest numbers): lifted to float32 it
// gets them as constants, or +-infinity would become +-3.4e38, not +-65504.
int KeepFloat16ClipRange(IrGraph& graph) {
  if (graph.OpsetOf("") < 11) return 0;
  int changed = 0;
  constexpr float kFloat16Largest = 65504.0f;
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    if (!graph.nodes[k].IsOp("", "Clip") || graph.nodes[k].inputs.empty()) continue;
    const int x = graph.nodes[k].inputs[0];
    if (x < 0 || graph.values[static_cast<size_t>(x)].dtype != DataType::kFloat16) continue;
    for (size_t bound : {size_t{1}, size_t{2}}) {
      if (bound < graph.nodes[k].inputs.size() && graph.nodes[k].inputs[bound] >= 0) continue;
      const float value = bound == 1 ? -kFloat16Largest : kFloat16Largest;
      const int c =
          graph.AddConstant(bound == 1 ? "clip_float16_lowest" : "clip_float16_largest",
                            ConstantData::FromVector<float>(DataType::kFloat32, {}, {value}));
      std::vector<int>& inputs = graph.nodes[k].inputs;
      if (inputs.size() <= bound) inputs.resize(bound + 1, -1);
      inputs[bound] = c;
      ++changed;
    }
  }
  return changed;
}

int Lift(IrGraph& graph, bool main_graph) {
  int changed = KeepFloat16ClipRange(graph);
  std::vector<bool> keep(graph.values.size(), false);  // the main graph's float16 inputs/outputs
  std::vector<IrNode> input_casts, output_casts;
  if (main_graph) {
    for (int in : graph.inputs) {
      const IrValue v = ValueOf(graph, in);
      if (v.dtype != DataType::kFloat16 || !v.is_plain_tensor()) continue;
      const int lifted = AddCastValue(graph, v, DataType::kFloat32, "_float32");
      ReplaceUses(graph, in, lifted);
      input_casts.push_back(CastNode(graph, v.name + "_to_float32", in, lifted, kOnnxFloat));
      keep.resize(graph.values.size(), false);
      keep[static_cast<size_t>(in)] = true;
    }
    for (int& out : graph.outputs) {
      const IrValue v = ValueOf(graph, out);
      if (v.dtype != DataType::kFloat16 || !v.is_plain_tensor() || keep[static_cast<size_t>(out)]) {
        continue;
      }
      if (v.is_constant()) {  // an initializer the graph outputs as it is
        keep[static_cast<size_t>(out)] = true;
        continue;
      }
      // The graph's computation makes a float32 value; a last Cast makes the output of the
      // output's name from it.
      const int lifted = AddCastValue(graph, v, DataType::kFloat16, "_float32");
      for (IrNode& n : graph.nodes) {
        for (int& o : n.outputs) {
          if (o == out) o = lifted;
        }
      }
      ReplaceUses(graph, out, lifted);
      output_casts.push_back(CastNode(graph, v.name + "_to_float16", lifted, out, kOnnxFloat16));
      keep.resize(graph.values.size(), false);
      keep[static_cast<size_t>(out)] = true;
    }
  }
  keep.resize(graph.values.size(), false);
  // An embedding table stays float16: its Gather picks float16 rows and a Cast after it widens
  // only those (a float16 LLM's table would otherwise be stored and mapped at twice its bytes).
  std::vector<std::pair<size_t, IrNode>> gather_casts;  // (the Gather's index, its Cast)
  if (main_graph) {
    const std::vector<bool> gathered = ReadOnlyAsGatherData(graph);
    for (size_t k = 0; k < graph.nodes.size(); ++k) {
      IrNode& n = graph.nodes[k];
      if (!n.domain.empty() || n.op_type != "Gather" || n.inputs.empty() || n.outputs.size() != 1)
        continue;
      const int table = n.inputs[0], out = n.outputs[0];
      if (table < 0 || out < 0 || !gathered[static_cast<size_t>(table)] ||
          keep[static_cast<size_t>(out)]) {
        continue;
      }
      const IrValue& t = graph.values[static_cast<size_t>(table)];
      if (!t.constant || t.dtype != DataType::kFloat16 ||
          t.constant->bytes.size() < kDeferredLiftMinBytes ||
          graph.values[static_cast<size_t>(out)].dtype != DataType::kFloat16) {
        continue;
      }
      const int rows = AddCastValue(graph, ValueOf(graph, out), DataType::kFloat16, "_float16");
      graph.nodes[k].outputs[0] = rows;
      gather_casts.emplace_back(
          k, CastNode(graph, graph.values[static_cast<size_t>(out)].name + "_to_float32", rows, out,
                      kOnnxFloat));
      keep.resize(graph.values.size(), false);
      keep[static_cast<size_t>(table)] = true;
      keep[static_cast<size_t>(rows)] = true;
    }
  }
  const std::vector<bool> weight_only =
      main_graph ? ReadOnlyAsMatMulWeight(graph) : std::vector<bool>(graph.values.size(), false);
  for (size_t i = 0; i < graph.values.size(); ++i) {
    IrValue& v = graph.values[i];
    if (keep[i] || v.dtype != DataType::kFloat16) continue;
    v.dtype = DataType::kFloat32;
    if (v.constant) {
      const bool defer = weight_only[i] && v.constant->bytes.size() >= kDeferredLiftMinBytes &&
                         v.shape.size() == 2;
      v.constant = defer ? DeferredFloat32(v.constant) : ToFloat32(*v.constant);
    }
    ++changed;
  }
  for (IrNode& n : graph.nodes) {
    changed += LiftAttributes(n);
    for (IrAttribute& a : n.attrs) {
      if (a.body) changed += Lift(*a.body, false);
    }
  }
  if (!input_casts.empty() || !output_casts.empty() || !gather_casts.empty()) {
    std::vector<IrNode> nodes = std::move(input_casts);
    size_t next_cast = 0;
    for (size_t k = 0; k < graph.nodes.size(); ++k) {
      nodes.push_back(std::move(graph.nodes[k]));
      if (next_cast < gather_casts.size() && gather_casts[next_cast].first == k) {
        nodes.push_back(std::move(gather_casts[next_cast++].second));
        ++changed;
      }
    }
    for (IrNode& n : output_casts) nodes.push_back(std::move(n));
    graph.nodes = std::move(nodes);
  }
  return changed;
}

}  // namespace

Result<PassStats> LiftFloat16(IrGraph& graph) {
  PassStats stats{"lift-float16", 0};
  stats.changed = Lift(graph, true);
  return stats;
}

}  // namespace epctx::compile
