// Weight-only quantized matmuls that read one activation (a Llama layer's Q, K and V projections;
// its MLP's gate and up) become one com.epctx MatMulNBitsPacked over their columns side by side,
// with one output per original node (attribute output_columns, nbits_layout.h). Each node
// quantizes its activation and, when its weight is large enough, hands its columns to the threads
// and waits for them; one node does that once per group, with more columns to share. The packed
// layout is column-major ([N, blocks, ...] codes, [N, blocks] scales and zero points, [N] bias),
// so the fused weight is the nodes' packed bytes one after the other, concatenated when the blob
// is written; each column is computed as before, bit for bit.
#include <map>
#include <tuple>
#include <vector>

#include "compile/packing/layouts.h"
#include "compile/passes/passes.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/quant/nbits_layout.h"
#include "util/overflow.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

namespace attr = exec::kernels::nbits_attr;

constexpr int kCodes = 1, kScales = 2, kZeroPoints = 3, kBias = 4;

// What makes two nodes fusable: the activation, K, bits, block size and accuracy level, and the
// kinds of their optional inputs (zero points absent, int8 or float; a bias or none).
using SiblingKey = std::tuple<int, int64_t, int64_t, int64_t, int64_t, int, bool>;

bool IsConstantOf(const IrGraph& g, int v, DataType dtype) {
  return v >= 0 && ValueOf(g, v).is_constant() && ValueOf(g, v).constant->dtype == dtype;
}

// Whether constant `v` holds exactly `count` elements. A node whose constants do not fit its own
// N (a bias of another column count, say) is left alone, for its kernel to refuse with its own
// message: concatenated, the parts would not add up to the fused node's sizes.
bool HasElements(const IrGraph& g, int v, int64_t count) {
  int64_t elements = 0;
  return ExactDimProduct(ValueOf(g, v).constant->shape, &elements) && elements == count;
}

// The node's key, or false when it cannot take part (its inputs are not the constants the
// fused weight is made of, or it is fused already).
bool KeyOf(const IrGraph& g, const IrNode& n, SiblingKey* key) {
  if (!n.IsOp(ops::kDomain, ops::kMatMulNBitsPacked) || n.inputs.size() != 5 ||
      n.outputs.size() != 1 || n.outputs[0] < 0 || n.inputs[0] < 0 ||
      n.FindAttr(attr::kOutputColumns) != nullptr || n.FindAttr(attr::kN) == nullptr ||
      !IsConstantOf(g, n.inputs[kCodes], DataType::kUint8) ||
      !IsConstantOf(g, n.inputs[kScales], DataType::kFloat32)) {
    return false;
  }
  int zero_points = 0;
  if (n.inputs[kZeroPoints] >= 0) {
    if (IsConstantOf(g, n.inputs[kZeroPoints], DataType::kInt8)) {
      zero_points = 1;
    } else if (IsConstantOf(g, n.inputs[kZeroPoints], DataType::kFloat32)) {
      zero_points = 2;
    } else {
      return false;
    }
  }
  const bool bias = n.inputs[kBias] >= 0;
  if (bias && !IsConstantOf(g, n.inputs[kBias], DataType::kFloat32)) return false;
  Result<exec::kernels::NBitsGeometry> geometry = exec::kernels::MakeNBitsGeometry(
      IntAttr(n, attr::kK, -1), IntAttr(n, attr::kN, -1), IntAttr(n, attr::kBits, 4),
      IntAttr(n, attr::kBlockSize, -1));
  if (!geometry.ok() || !HasElements(g, n.inputs[kCodes], geometry->code_bytes()) ||
      !HasElements(g, n.inputs[kScales], geometry->block_count()) ||
      (zero_points != 0 && !HasElements(g, n.inputs[kZeroPoints], geometry->block_count())) ||
      (bias && !HasElements(g, n.inputs[kBias], geometry->n))) {
    return false;
  }
  *key = {n.inputs[0],
          IntAttr(n, attr::kK, -1),
          IntAttr(n, attr::kBits, 4),
          IntAttr(n, attr::kBlockSize, -1),
          IntAttr(n, attr::kAccuracyLevel, 0),
          zero_points,
          bias};
  return true;
}

// The constants `parts` one after the other, made when the blob is written (each part
// materialized in turn, its file pages given back after it).
std::shared_ptr<ConstantData> Concatenated(const IrGraph& g, const std::vector<int>& parts,
                                           DataType dtype, std::vector<int64_t> shape,
                                           uint32_t layout) {
  std::vector<std::shared_ptr<const ConstantData>> sources;
  for (int p : parts) sources.push_back(ValueOf(g, p).constant);
  auto make = [sources, dtype, shape]() -> Result<Tensor> {
    auto bytes = std::make_shared<std::vector<std::byte>>();
    for (const auto& source : sources) {
      EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const ConstantData> part, Materialize(source));
      bytes->insert(bytes->end(), part->bytes.begin(), part->bytes.end());
      part->ReleasePages();
    }
    int64_t elements = 0;
    if (!ExactDimProduct(shape, &elements) ||
        bytes->size() != static_cast<uint64_t>(elements) * DataTypeSize(dtype)) {
      return EPCTX_ERROR(kInternal,
                         "the fused MatMulNBitsPacked constant has {} bytes, not the {} its "
                         "shape needs",
                         bytes->size(), static_cast<uint64_t>(elements) * DataTypeSize(dtype));
    }
    return Tensor::View(dtype, shape, bytes->data(), bytes);
  };
  return ConstantData::Deferred(dtype, std::move(shape), layout, std::move(make));
}

// Input `input` of every node of `group`.
std::vector<int> InputsOf(const IrGraph& g, const std::vector<int>& group, int input) {
  std::vector<int> values;
  for (int i : group) values.push_back(g.nodes[static_cast<size_t>(i)].inputs[input]);
  return values;
}

// Fuses `group`; false (nothing changed) when their columns together would be more than the
// kernel takes: each node alone is still fine.
bool Fuse(IrGraph& g, const std::vector<int>& group, std::vector<bool>& dead) {
  IrNode& first = g.nodes[static_cast<size_t>(group[0])];
  std::vector<int64_t> columns;
  std::vector<int> outputs;
  int64_t n = 0;
  for (int i : group) {
    const IrNode& sibling = g.nodes[static_cast<size_t>(i)];
    columns.push_back(IntAttr(sibling, attr::kN, 0));
    outputs.push_back(sibling.outputs[0]);
    if (__builtin_add_overflow(n, columns.back(), &n)) return false;
  }
  // The geometry of the whole, checked as the kernel will check it (N a sum that does not
  // overflow the sizes).
  Result<exec::kernels::NBitsGeometry> whole = exec::kernels::MakeNBitsGeometry(
      IntAttr(first, attr::kK, -1), n, IntAttr(first, attr::kBits, 4),
      IntAttr(first, attr::kBlockSize, -1));
  if (!whole.ok()) return false;
  const exec::kernels::NBitsGeometry& geometry = *whole;
  const std::string base = ValueOf(g, first.inputs[kCodes]).name;
  const int codes = g.AddConstant(base + "_siblings",
                                  Concatenated(g, InputsOf(g, group, kCodes), DataType::kUint8,
                                               {geometry.n, geometry.blocks, geometry.block_bytes},
                                               static_cast<uint32_t>(PackLayout::kNBitsCodes)));
  const int scales = g.AddConstant(base + "_sibling_scales",
                                   Concatenated(g, InputsOf(g, group, kScales), DataType::kFloat32,
                                                {geometry.block_count()}, 0));
  int zero_points = -1;
  if (first.inputs[kZeroPoints] >= 0) {
    const DataType dtype = ValueOf(g, first.inputs[kZeroPoints]).constant->dtype;
    zero_points = g.AddConstant(
        base + "_sibling_zero_points",
        Concatenated(g, InputsOf(g, group, kZeroPoints), dtype, {geometry.n, geometry.blocks}, 0));
  }
  int bias = -1;
  if (first.inputs[kBias] >= 0) {
    bias = g.AddConstant(base + "_sibling_bias", Concatenated(g, InputsOf(g, group, kBias),
                                                              DataType::kFloat32, {geometry.n}, 0));
  }
  first.inputs = {first.inputs[0], codes, scales, zero_points, bias};
  first.outputs = outputs;
  first.SetInt(attr::kN, n);
  first.SetInts(attr::kOutputColumns, columns);
  for (size_t i = 1; i < group.size(); ++i) dead[static_cast<size_t>(group[i])] = true;
  return true;
}

}  // namespace

Result<PassStats> FuseSiblingNBitsMatMuls(IrGraph& graph) {
  PassStats stats{"fuse-sibling-nbits", 0};
  std::map<SiblingKey, std::vector<int>> groups;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    SiblingKey key;
    if (KeyOf(graph, graph.nodes[i], &key)) groups[key].push_back(static_cast<int>(i));
  }
  std::vector<bool> dead(graph.nodes.size(), false);
  for (const auto& [key, group] : groups) {
    if (group.size() < 2) continue;
    if (Fuse(graph, group, dead)) stats.changed += static_cast<int>(group.size()) - 1;
  }
  EraseNodes(graph, dead);
  return stats;
}

}  // namespace epctx::compile
