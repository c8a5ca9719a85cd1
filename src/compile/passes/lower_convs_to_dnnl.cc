// LowerConvsToDnnl (passes.h): Conv and FusedConv with a constant float32 filter become
// com.epctx DnnlConv, run by oneDNN.
#include "compile/passes/dnnl_lowering.h"
#include "compile/passes/passes.h"
#include "exec/kernels/epctx_ops.h"
#include "util/status_macros.h"

namespace epctx::compile {

Result<PassStats> LowerConvsToDnnl(IrGraph& graph) {
  PassStats stats{"lower-conv-dnnl", 0};
  for (IrNode& n : graph.nodes) {
    const bool fused = n.IsOp(ops::kDomain, ops::kFusedConv);
    if (!IsOnnx(n, "Conv") && !fused) continue;
    if (n.inputs.size() < 2 || n.outputs.size() != 1 || n.inputs[0] < 0) continue;
    if (!IsFloatConstant(graph, n.inputs[1])) continue;
    const IrValue& x = ValueOf(graph, n.inputs[0]);
    const IrValue& w = ValueOf(graph, n.inputs[1]);
    if (x.dtype != DataType::kFloat32 || !x.shape_known || x.shape.size() != w.shape.size() ||
        w.shape.size() < 3 || w.shape.size() > 5 || TooWideForDnnlConv(x)) {
      continue;
    }
    if (n.inputs.size() > 2 && n.inputs[2] >= 0 &&
        ValueOf(graph, n.inputs[2]).dtype != DataType::kFloat32) {
      continue;
    }
    if (fused && !TakeFusedActivation(n)) continue;
    if (n.FindAttr("kernel_shape") == nullptr) {
      n.SetInts("kernel_shape", std::vector<int64_t>(w.shape.begin() + 2, w.shape.end()));
    }
    n.op_type = ops::kDnnlConv;
    n.domain = ops::kDomain;
    stats.changed++;
  }
  if (stats.changed > 0) graph.DeclareEpctxOpset();
  return stats;
}

}  // namespace epctx::compile
