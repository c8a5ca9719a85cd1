#include <algorithm>
#include <cstring>

#include "compile/packing/pack_weights.h"
#include "compile/passes/passes.h"
#include "util/status_macros.h"

namespace epctx::compile {

bool ScalarConstant(const IrGraph& graph, int index, float* out) {
  if (index < 0) return false;
  const IrValue& v = ValueOf(graph, index);
  if (!v.constant || v.constant->dtype != DataType::kFloat32 ||
      v.constant->bytes.size() != sizeof(float)) {
    return false;
  }
  std::memcpy(out, v.constant->bytes.data(), sizeof(float));
  return true;
}

void ReplaceUses(IrGraph& graph, int from, int to) {
  for (IrNode& n : graph.nodes) {
    for (int& i : n.inputs) {
      if (i == from) i = to;
    }
  }
}

void EraseNodes(IrGraph& graph, const std::vector<bool>& dead) {
  size_t out = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!dead[i]) {
      if (out != i) graph.nodes[out] = std::move(graph.nodes[i]);
      ++out;
    }
  }
  graph.nodes.resize(out);
}

bool IsGraphOutput(const IrGraph& graph, int value) {
  return std::find(graph.outputs.begin(), graph.outputs.end(), value) != graph.outputs.end();
}

Result<std::vector<PassStats>> RunAllPasses(IrGraph& graph, const PassOptions& options) {
  std::vector<PassStats> stats;
  using Pass = Result<PassStats> (*)(IrGraph&);
  const Pass bf16 = options.compute_bf16 ? ComputeInBf16 : nullptr;
  for (Pass pass : {LiftFloat16,
                    EliminateIdentityLike,
                    LowerQdqMatMulsToInteger,
                    LowerQdqConvsToInteger,
                    LowerMatMulNBits,
                    FoldConstants,
                    FoldBatchNormIntoConv,
                    FuseActivations,
                    FuseRmsNorms,
                    FuseAttention,
                    LowerConvsToDnnl,
                    LowerMatMulsToDnnl,
                    LowerMatMulIntegersToDnnl,
                    LowerBatchMatMulsToDnnl,
                    FuseDnnlPostOps,
                    FuseMaskedSoftmax,
                    PlanActivationLayouts,
                    bf16,
                    PackWeights,
                    EliminateDeadNodes}) {
    if (pass == nullptr) continue;
    EPCTX_ASSIGN_OR_RETURN(PassStats s, pass(graph));
    stats.push_back(std::move(s));
  }
  // Control-flow bodies are graphs of their own: their captures are inputs, so the passes need
  // nothing from the enclosing graph.
  for (IrNode& n : graph.nodes) {
    for (IrAttribute& a : n.attrs) {
      if (!a.body) continue;
      EPCTX_ASSIGN_OR_RETURN(std::vector<PassStats> body_stats, RunAllPasses(*a.body, options));
      for (size_t i = 0; i < stats.size() && i < body_stats.size(); ++i) {
        stats[i].changed += body_stats[i].changed;
      }
    }
  }
  return stats;
}

}  // namespace epctx::compile
