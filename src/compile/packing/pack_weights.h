// Packs constant weights into the layout their kernel consumes, so that at load time weights
// are used in place from the blob mapping with no copy or repack.
#pragma once

#include "compile/ir.h"
#include "compile/passes/passes.h"

namespace epctx::compile {

// Gemm/FusedGemm with a constant float32 B: B becomes [N, K] with alpha folded in (transB=1,
// alpha=1). Conv/FusedConv filters are tagged kConvFilterOihw.
Result<PassStats> PackWeights(IrGraph& graph);

}  // namespace epctx::compile
