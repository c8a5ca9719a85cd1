// The standard pipeline (RunAllPasses, passes.h): which passes run, in which order.
#include "compile/packing/pack_weights.h"
#include "compile/passes/passes.h"
#include "util/status_macros.h"

namespace epctx::compile {

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
                    PoolBeforePointwiseConvs,
                    FuseActivations,
                    FuseRmsNorms,
                    FuseAttention,
                    FuseCacheConcatIntoAttention,
                    FuseRotateHalf,
                    FuseSwiGlu,
                    FuseSiblingNBitsMatMuls,
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
