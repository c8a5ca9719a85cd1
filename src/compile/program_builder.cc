#include "compile/program_builder.h"

#include <algorithm>

#include "compile/memory_planner.h"
#include "format/blob_layout.h"
#include "format/program_dataflow.h"
#include "program_generated.h"
#include "util/overflow.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// Values the program needs, renumbered densely in first-appearance order.
struct ValueIndex {
  std::vector<int> ir_to_program;
  std::vector<int> program_to_ir;

  int Add(int ir) {
    if (ir < 0) return -1;
    int& slot = ir_to_program[static_cast<size_t>(ir)];
    if (slot < 0) {
      slot = static_cast<int>(program_to_ir.size());
      program_to_ir.push_back(ir);
    }
    return slot;
  }
};

// `graph`: the program index of the attribute's body, -1 for other attributes.
Offset<fb::Attribute> BuildAttribute(FlatBufferBuilder& fbb, const IrAttribute& a, int32_t graph) {
  auto name = fbb.CreateString(a.name);
  Offset<flatbuffers::Vector<uint8_t>> s = 0;
  Offset<flatbuffers::Vector<int64_t>> ints = 0;
  Offset<flatbuffers::Vector<float>> floats = 0;
  Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> strings = 0;
  int32_t tensor_dtype = 0;
  switch (a.type) {
    case exec::AttrType::kString:
      s = fbb.CreateVector(reinterpret_cast<const uint8_t*>(a.s.data()), a.s.size());
      break;
    case exec::AttrType::kInts:
      ints = fbb.CreateVector(a.ints);
      break;
    case exec::AttrType::kFloats:
      floats = fbb.CreateVector(a.floats);
      break;
    case exec::AttrType::kStrings:
      strings = fbb.CreateVectorOfStrings(a.strings);
      break;
    case exec::AttrType::kTensor:
      s = fbb.CreateVector(reinterpret_cast<const uint8_t*>(a.tensor->bytes.data()),
                           a.tensor->bytes.size());
      ints = fbb.CreateVector(a.tensor->shape);
      tensor_dtype = static_cast<int32_t>(a.tensor->dtype);
      break;
    default:
      break;
  }
  fb::AttributeBuilder b(fbb);
  b.add_name(name);
  b.add_type(static_cast<fb::AttrType>(a.type));
  b.add_i(a.i);
  b.add_f(a.f);
  if (!s.IsNull()) b.add_s(s);
  if (!ints.IsNull()) b.add_ints(ints);
  if (!floats.IsNull()) b.add_floats(floats);
  if (!strings.IsNull()) b.add_strings(strings);
  b.add_tensor_dtype(tensor_dtype);
  b.add_graph(graph);
  return b.Finish();
}

// Where a Concat input lives when its producer writes it straight into the Concat's output.
struct ConcatPart {
  int whole = -1;       // planned index of the Concat's output; -1: not a part
  uint64_t offset = 0;  // its byte offset there
};

// Whether ONNX Concat node `n` (output `y`, inputs at planned indices `in`, -1 when not planned;
// the caller checked the op) can have its inputs written in place: each input a whole block of
// the output (every dim before the axis is 1), at offsets the arena's alignment allows, each
// input a value of its own (not a view shared with another, not already another Concat's part or
// output, not repeated). Sets `deltas` to the inputs' byte offsets in the output.
bool ConcatInPlace(const IrNode& n, const IrValue& y, const std::vector<int>& in,
                   const std::vector<Lifetime>& lifetimes, const std::vector<int>& members,
                   const std::vector<ConcatPart>& parts, const std::vector<bool>& whole,
                   uint64_t y_bytes, std::vector<uint64_t>* deltas) {
  const IrAttribute* axis_attr = n.FindAttr("axis");
  const int64_t rank = static_cast<int64_t>(y.shape.size());
  if (axis_attr == nullptr || rank == 0) return false;
  const int64_t axis = axis_attr->i < 0 ? axis_attr->i + rank : axis_attr->i;
  if (axis < 0 || axis >= rank) return false;
  for (int64_t d = 0; d < axis; ++d) {
    if (y.shape[static_cast<size_t>(d)] != 1) return false;
  }
  uint64_t at = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const int p = in[i];
    if (p < 0 || members[static_cast<size_t>(p)] != 1 || parts[static_cast<size_t>(p)].whole >= 0 ||
        whole[static_cast<size_t>(p)] || std::count(in.begin(), in.end(), p) != 1 ||
        at % format::kTensorAlignment != 0) {
      return false;
    }
    deltas->push_back(at);
    at += lifetimes[static_cast<size_t>(p)].bytes;
  }
  return at == y_bytes;
}

// Builds `graph` as program programs.size() and its bodies after it (depth first), so every body
// comes after the program that uses it.
Result<BuiltProgram> BuildInto(const IrGraph& graph, format::BlobWriter& writer,
                               std::vector<std::vector<uint8_t>>& programs,
                               const WeightCallback& on_weight) {
  const size_t self = programs.size();
  programs.emplace_back();
  ValueIndex index{std::vector<int>(graph.values.size(), -1), {}};
  for (int v : graph.inputs) index.Add(v);
  for (int v : graph.outputs) index.Add(v);
  for (const IrNode& n : graph.nodes) {
    for (int v : n.inputs) index.Add(v);
    for (int v : n.outputs) index.Add(v);
  }
  const size_t count = index.program_to_ir.size();

  // Lifetimes of arena candidates: statically shaped intermediates (not graph inputs, outputs or
  // weights; outputs must outlive the run, so they get their own memory).
  std::vector<int> first(count, -1), last(count, -1);
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    for (int v : graph.nodes[k].outputs) {
      int p = index.Add(v);
      if (p >= 0 && first[static_cast<size_t>(p)] < 0)
        first[static_cast<size_t>(p)] = static_cast<int>(k);
    }
    for (int v : graph.nodes[k].inputs) {
      int p = index.Add(v);
      if (p >= 0) last[static_cast<size_t>(p)] = static_cast<int>(k);
    }
  }
  std::vector<bool> is_io(count, false);
  for (int v : graph.inputs) is_io[static_cast<size_t>(index.Add(v))] = true;
  for (int v : graph.outputs) is_io[static_cast<size_t>(index.Add(v))] = true;
  std::vector<Lifetime> lifetimes;
  std::vector<size_t> planned;
  for (size_t p = 0; p < count; ++p) {
    const IrValue& v = graph.values[static_cast<size_t>(index.program_to_ir[p])];
    if (is_io[p] || v.is_constant() || !v.is_plain_tensor() || !v.fully_static() || first[p] < 0) {
      continue;
    }
    size_t elem = DataTypeSize(v.dtype);
    auto elements = CheckedElementCount(v.shape);
    uint64_t bytes = 0;
    if (elem == 0 || !elements.ok() ||
        !CheckedMul(static_cast<uint64_t>(*elements), elem, &bytes)) {
      continue;
    }
    lifetimes.push_back({bytes, first[p], std::max(first[p], last[p])});
    planned.push_back(p);
  }
  // Outputs that only view their input differently (Reshape and the like) share its memory: the
  // two values become one lifetime, so the kernel can skip the copy (KernelContext::ShareInput).
  std::vector<int> group(count, -1);  // planned index of each program value
  for (size_t i = 0; i < planned.size(); ++i) group[planned[i]] = static_cast<int>(i);
  std::vector<int> root(lifetimes.size());
  for (size_t i = 0; i < root.size(); ++i) root[i] = static_cast<int>(i);
  auto find = [&](int i) {
    while (root[static_cast<size_t>(i)] != i) i = root[static_cast<size_t>(i)];
    return i;
  };
  for (const IrNode& n : graph.nodes) {
    if (!format::IsViewOp(n.domain, n.op_type) || n.inputs.empty() || n.outputs.empty()) continue;
    const int in = index.Add(n.inputs[0]), out = index.Add(n.outputs[0]);
    if (in < 0 || out < 0) continue;
    const int a = group[static_cast<size_t>(in)], b = group[static_cast<size_t>(out)];
    if (a < 0 || b < 0) continue;
    const int ra = find(a), rb = find(b);
    if (ra == rb ||
        lifetimes[static_cast<size_t>(ra)].bytes != lifetimes[static_cast<size_t>(rb)].bytes) {
      continue;
    }
    Lifetime& keep = lifetimes[static_cast<size_t>(ra)];
    const Lifetime& gone = lifetimes[static_cast<size_t>(rb)];
    keep.first = std::min(keep.first, gone.first);
    keep.last = std::max(keep.last, gone.last);
    root[static_cast<size_t>(rb)] = ra;
  }
  // Inputs of a Concat that its producers write straight into their place in its output (the
  // kernel then copies nothing): each becomes a part of the output's lifetime, at its offset.
  std::vector<int> members(lifetimes.size(), 0);
  for (size_t i = 0; i < lifetimes.size(); ++i)
    ++members[static_cast<size_t>(find(static_cast<int>(i)))];
  std::vector<ConcatPart> parts(lifetimes.size());
  std::vector<bool> whole(lifetimes.size(), false);
  for (const IrNode& n : graph.nodes) {
    if (!n.domain.empty() || n.op_type != "Concat" || n.inputs.empty() || n.outputs.size() != 1) {
      continue;
    }
    std::vector<int> in;  // planned indices of the inputs
    for (int v : n.inputs) {
      const int p = index.Add(v);
      in.push_back(p < 0 ? -1 : group[static_cast<size_t>(p)]);
    }
    const int out_p = index.Add(n.outputs[0]);
    const int out = out_p < 0 ? -1 : group[static_cast<size_t>(out_p)];
    if (out < 0) continue;
    const IrValue& y = graph.values[static_cast<size_t>(n.outputs[0])];
    const int w = find(out);
    if (parts[static_cast<size_t>(w)].whole >= 0) continue;  // nested: stays a copy
    std::vector<uint64_t> deltas;
    if (!ConcatInPlace(n, y, in, lifetimes, members, parts, whole,
                       lifetimes[static_cast<size_t>(w)].bytes, &deltas)) {
      continue;
    }
    whole[static_cast<size_t>(w)] = true;
    Lifetime& span = lifetimes[static_cast<size_t>(w)];
    for (size_t i = 0; i < in.size(); ++i) {
      const size_t part = static_cast<size_t>(in[i]);
      parts[part] = {out, deltas[i]};
      span.first = std::min(span.first, lifetimes[part].first);
      span.last = std::max(span.last, lifetimes[part].last);
    }
  }
  std::vector<Lifetime> merged;
  std::vector<int> merged_index(lifetimes.size(), -1);
  for (size_t i = 0; i < lifetimes.size(); ++i) {
    if (find(static_cast<int>(i)) != static_cast<int>(i) || parts[i].whole >= 0) continue;
    merged_index[i] = static_cast<int>(merged.size());
    merged.push_back(lifetimes[i]);
  }
  ArenaPlan merged_plan = PlanArena(merged, format::kTensorAlignment);
  ArenaPlan plan;
  plan.arena_bytes = merged_plan.arena_bytes;
  for (size_t i = 0; i < lifetimes.size(); ++i) {
    const bool part = parts[i].whole >= 0;
    const int holder = find(part ? parts[i].whole : static_cast<int>(i));
    plan.offsets.push_back(
        merged_plan.offsets[static_cast<size_t>(merged_index[static_cast<size_t>(holder)])] +
        (part ? parts[i].offset : 0));
  }
  // The reader's limits: a program beyond them would be refused at load.
  if (count > format::kMaxValuesPerProgram || graph.nodes.size() > format::kMaxNodesPerProgram ||
      plan.arena_bytes > static_cast<uint64_t>(format::kMaxArenaBytes)) {
    return EPCTX_ERROR(kUnsupported,
                       "graph '{}' has {} values, {} nodes and a {}-byte arena; the limits are "
                       "{}, {} and {}",
                       graph.name, count, graph.nodes.size(), plan.arena_bytes,
                       format::kMaxValuesPerProgram, format::kMaxNodesPerProgram,
                       format::kMaxArenaBytes);
  }
  std::vector<int64_t> arena_offset(count, -1), arena_bytes(count, 0);
  for (size_t i = 0; i < planned.size(); ++i) {
    arena_offset[planned[i]] = static_cast<int64_t>(plan.offsets[i]);
    arena_bytes[planned[i]] = static_cast<int64_t>(lifetimes[i].bytes);
  }

  FlatBufferBuilder fbb(1 << 16);
  std::vector<Offset<fb::Value>> values;
  values.reserve(count);
  for (size_t p = 0; p < count; ++p) {
    const IrValue& v = graph.values[static_cast<size_t>(index.program_to_ir[p])];
    int32_t weight = -1;
    if (v.is_constant()) {
      // A deferred weight is packed now, handed to the writer (which, streaming to a file, writes
      // it at once) and freed; a weight read in place from a file gives its pages back.
      EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const ConstantData> c, Materialize(v.constant));
      format::WeightInput w;
      w.dtype = c->dtype;
      w.shape = c->shape;
      w.layout = c->layout;
      w.bytes = c->bytes;
      w.owner = c->owner;
      w.required_cpu_features = c->required_cpu_features;
      EPCTX_ASSIGN_OR_RETURN(uint32_t wi, writer.AddWeight(std::move(w)));
      c->ReleasePages();
      weight = static_cast<int32_t>(wi);
      if (on_weight) on_weight();
    }
    std::vector<std::string> dim_names = v.dim_names;
    dim_names.resize(v.shape.size());
    auto name = fbb.CreateString(v.name);
    auto shape = v.shape_known ? fbb.CreateVector(v.shape) : 0;
    auto dims = v.shape_known ? fbb.CreateVectorOfStrings(dim_names) : 0;
    fb::ValueBuilder vb(fbb);
    vb.add_name(name);
    vb.add_dtype(static_cast<int32_t>(v.dtype));
    if (!shape.IsNull()) vb.add_shape(shape);
    if (!dims.IsNull()) vb.add_dim_names(dims);
    vb.add_weight(weight);
    vb.add_arena_offset(arena_offset[p]);
    vb.add_arena_bytes(arena_bytes[p]);
    vb.add_kind(static_cast<uint8_t>(v.kind));
    vb.add_optional(v.optional);
    values.push_back(vb.Finish());
  }

  std::vector<Offset<fb::Node>> nodes;
  nodes.reserve(graph.nodes.size());
  for (const IrNode& n : graph.nodes) {
    std::vector<int32_t> ins, outs;
    for (int v : n.inputs) ins.push_back(index.Add(v));
    for (int v : n.outputs) outs.push_back(index.Add(v));
    std::vector<Offset<fb::Attribute>> attrs;
    for (const IrAttribute& a : n.attrs) {
      int32_t body = -1;
      if (a.body) {
        body = static_cast<int32_t>(programs.size());
        EPCTX_RETURN_IF_ERROR(BuildInto(*a.body, writer, programs, on_weight).status());
      }
      attrs.push_back(BuildAttribute(fbb, a, body));
    }
    nodes.push_back(fb::CreateNode(
        fbb, fbb.CreateString(n.name), fbb.CreateString(n.op_type), fbb.CreateString(n.domain),
        fbb.CreateVector(ins), fbb.CreateVector(outs), fbb.CreateVector(attrs), n.implicit_inputs));
  }
  std::vector<int32_t> inputs, outputs;
  for (int v : graph.inputs) inputs.push_back(index.Add(v));
  for (int v : graph.outputs) outputs.push_back(index.Add(v));
  std::vector<Offset<fb::OpsetImport>> opsets;
  for (const auto& [domain, version] : graph.opsets) {
    opsets.push_back(fb::CreateOpsetImport(fbb, fbb.CreateString(domain), version));
  }
  fbb.Finish(fb::CreateProgram(fbb, fbb.CreateString(graph.name), fbb.CreateVector(values),
                               fbb.CreateVector(nodes), fbb.CreateVector(inputs),
                               fbb.CreateVector(outputs), static_cast<int64_t>(plan.arena_bytes),
                               fbb.CreateVector(opsets)));
  programs[self].assign(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  BuiltProgram out;
  out.node_count = graph.nodes.size();
  out.value_count = count;
  out.arena_bytes = plan.arena_bytes;
  return out;
}

}  // namespace

Result<BuiltProgram> BuildProgram(const IrGraph& graph, format::BlobWriter& writer,
                                  const WeightCallback& on_weight) {
  std::vector<std::vector<uint8_t>> programs;
  EPCTX_ASSIGN_OR_RETURN(BuiltProgram out, BuildInto(graph, writer, programs, on_weight));
  out.programs = std::move(programs);
  return out;
}

size_t CountProgramWeights(const IrGraph& graph) {
  std::vector<bool> seen(graph.values.size(), false);
  size_t count = 0;
  auto visit = [&](int v) {
    if (v < 0 || seen[static_cast<size_t>(v)]) return;
    seen[static_cast<size_t>(v)] = true;
    if (graph.values[static_cast<size_t>(v)].is_constant()) ++count;
  };
  for (int v : graph.inputs) visit(v);
  for (int v : graph.outputs) visit(v);
  for (const IrNode& n : graph.nodes) {
    for (int v : n.inputs) visit(v);
    for (int v : n.outputs) visit(v);
    for (const IrAttribute& a : n.attrs) {
      if (a.body) count += CountProgramWeights(*a.body);
    }
  }
  return count;
}

}  // namespace epctx::compile
