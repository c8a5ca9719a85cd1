// LowerBatchMatMulsToDnnl (passes.h): MatMul of two float32 activations becomes com.epctx
// DnnlBatchMatMul, with the transposes around it folded into its strides.
#include "compile/passes/dnnl_lowering.h"
#include "compile/passes/passes.h"
#include "exec/kernels/epctx_ops.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

// The rank of a value (-1 when unknown): from its shape, or through its producer: a Transpose's
// perm, a matrix product (the larger operand rank), element-wise ops and Softmax (their
// operands' ranks, broadcast).
int RankOf(const IrGraph& g, int v, const std::vector<int>& producer, int depth = 0) {
  if (v < 0) return -1;
  const IrValue& x = ValueOf(g, v);
  if (x.shape_known) return static_cast<int>(x.shape.size());
  const int p = producer[static_cast<size_t>(v)];
  if (p < 0 || depth > 16) return -1;
  const IrNode& n = g.nodes[static_cast<size_t>(p)];
  if (IsOnnx(n, "Transpose")) {
    const IrAttribute* perm = n.FindAttr("perm");
    return perm != nullptr ? static_cast<int>(perm->ints.size()) : -1;
  }
  const bool matmul = IsOnnx(n, "MatMul") || (n.IsOp(ops::kDomain, ops::kDnnlBatchMatMul) &&
                                              n.FindAttr(ops::kOutPerm) == nullptr);
  const bool elementwise =
      n.domain.empty() &&
      (n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul" || n.op_type == "Div" ||
       n.op_type == "Softmax" || n.op_type == "Where" || n.op_type == "Relu" || n.op_type == "Exp");
  if (!matmul && !elementwise) return -1;
  int rank = -1;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const int i = n.inputs[k];
    if (i < 0) continue;
    // A folded Transpose still tells its operand's rank.
    const IrAttribute* perm = n.op_type == ops::kDnnlBatchMatMul && k < 2
                                  ? n.FindAttr(k == 0 ? ops::kAPerm : ops::kBPerm)
                                  : nullptr;
    const int r =
        perm != nullptr ? static_cast<int>(perm->ints.size()) : RankOf(g, i, producer, depth + 1);
    if (r < 0) return -1;  // an operand of unknown rank could broadcast the result up
    rank = std::max(rank, r);
  }
  return rank;
}

// A Transpose read only by node `user` (not a graph output): its perm, or empty.
std::vector<int64_t> SoleTransposePerm(const IrGraph& g, int v, const std::vector<int>& producer,
                                       const std::vector<int>& uses) {
  if (v < 0 || uses[static_cast<size_t>(v)] != 1 || IsGraphOutput(g, v)) return {};
  const int p = producer[static_cast<size_t>(v)];
  if (p < 0) return {};
  const IrNode& t = g.nodes[static_cast<size_t>(p)];
  if (!IsOnnx(t, "Transpose") || t.inputs.size() != 1 || t.outputs.size() != 1) return {};
  const IrAttribute* perm = t.FindAttr("perm");
  return perm != nullptr ? perm->ints : std::vector<int64_t>{};
}

}  // namespace

Result<PassStats> LowerBatchMatMulsToDnnl(IrGraph& graph) {
  PassStats stats{"lower-batch-matmul-dnnl", 0};
  std::vector<int> producer = Producers(graph);
  std::vector<int> uses = CountUses(graph);
  std::vector<bool> dead(graph.nodes.size(), false);
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    IrNode& n = graph.nodes[k];
    if (!IsOnnx(n, "MatMul") || n.inputs.size() != 2 || n.outputs.size() != 1) continue;
    const int a = n.inputs[0], b = n.inputs[1];
    if (a < 0 || b < 0 || ValueOf(graph, b).is_constant() ||
        ValueOf(graph, a).dtype != DataType::kFloat32 ||
        ValueOf(graph, b).dtype != DataType::kFloat32) {
      continue;
    }
    // oneDNN multiplies matrices of rank 2 and up; a 1-D operand stays on our MatMul.
    if (RankOf(graph, a, producer) < 2 || RankOf(graph, b, producer) < 2) continue;
    n.op_type = ops::kDnnlBatchMatMul;
    n.domain = ops::kDomain;
    // Transposes feeding it, or reordering its output, become strides of the matmul.
    for (int i = 0; i < 2; ++i) {
      const int v = n.inputs[static_cast<size_t>(i)];
      std::vector<int64_t> perm = SoleTransposePerm(graph, v, producer, uses);
      if (perm.empty()) continue;
      const size_t t = static_cast<size_t>(producer[static_cast<size_t>(v)]);
      n.inputs[static_cast<size_t>(i)] = graph.nodes[t].inputs[0];
      n.SetInts(i == 0 ? ops::kAPerm : ops::kBPerm, std::move(perm));
      dead[t] = true;
      stats.changed++;
    }
    const int y = n.outputs[0];
    if (uses[static_cast<size_t>(y)] == 1 && !IsGraphOutput(graph, y)) {
      for (size_t c = k + 1; c < graph.nodes.size(); ++c) {
        IrNode& t = graph.nodes[c];
        if (t.inputs.empty() || t.inputs[0] != y) continue;
        const IrAttribute* perm = t.FindAttr("perm");
        if (IsOnnx(t, "Transpose") && t.outputs.size() == 1 && perm != nullptr) {
          n.SetInts(ops::kOutPerm, perm->ints);
          n.outputs[0] = t.outputs[0];
          dead[c] = true;
          stats.changed++;
        }
        break;
      }
    }
    stats.changed++;
  }
  EraseNodes(graph, dead);
  if (stats.changed > 0) graph.DeclareEpctxOpset();
  return stats;
}

}  // namespace epctx::compile
