// Packs constant weights into the layout their kernel consumes, so that at load time weights
// are used in place from the blob mapping with no copy or repack.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compile/ir.h"
#include "compile/passes/passes.h"

namespace epctx::compile {

// Gemm/FusedGemm with a constant float32 B: B becomes [N, K] with alpha folded in (transB=1,
// alpha=1). Conv/FusedConv filters are tagged kConvFilterOihw.
Result<PassStats> PackWeights(IrGraph& graph);

// A convolution's logical input dims for choosing oneDNN's layouts at compile time, its unknown
// (negative) dims replaced: the batch by 1, the channels by the filter's, each spatial dim by 32
// or the dilated kernel's span if larger. oneDNN's choice depends on channels and the CPU, not on
// batch or image size; the kernel reads what was chosen whatever shape comes at run time.
std::vector<int64_t> RepresentativeConvInput(std::vector<int64_t> src,
                                             std::span<const int64_t> filter_dims, int64_t group,
                                             std::span<const int64_t> dilations);

}  // namespace epctx::compile
