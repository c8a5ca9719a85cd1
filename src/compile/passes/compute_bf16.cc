#include "compile/passes/passes.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/onednn/compute_type.h"
#include "util/status_macros.h"

namespace epctx::compile {

namespace onednn = exec::kernels::onednn;

Result<PassStats> ComputeInBf16(IrGraph& graph) {
  PassStats stats{"compute-bf16", 0};
  if (!onednn::HasBf16Kernels()) {
    return EPCTX_ERROR(kUnsupported,
                       "epctx.precision=bf16 needs oneDNN kernels with bf16 instructions (a CPU "
                       "with avx512_bf16, and epctx.target_isa native); this process has none");
  }
  for (IrNode& n : graph.nodes) {
    if (n.domain != ops::kDomain || (n.op_type != ops::kDnnlConv && n.op_type != ops::kDnnlMatMul))
      continue;
    n.SetString(ops::kComputeType, std::string(onednn::kComputeTypeBf16));
    stats.changed++;
  }
  return stats;
}

}  // namespace epctx::compile
