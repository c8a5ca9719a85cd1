// Packs constant weights into the layout their kernel consumes, so that at load time weights
// are used in place from the blob mapping with no copy or repack.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compile/ir.h"
#include "compile/passes/passes.h"
#include "exec/kernels/onednn/conv_primitive.h"

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

// The float convolution a DnnlConv node `n` asks oneDNN for at compile time: its attributes
// (window, group, layouts, Winograd, post-ops, compute type, bias) and the filter's dims, on the
// input's logical dims `src`, unknown ones taken as RepresentativeConvInput takes them. The
// packing asks for the layout to pack the filter in; the layout plan asks it first with the
// layouts it weighs in place of the node's.
struct CompileTimeConv {
  exec::kernels::onednn::ConvGeometry geometry;
  exec::kernels::onednn::ConvConfig config;
};
Result<CompileTimeConv> CompileTimeConvOf(const IrGraph& graph, const IrNode& n,
                                          std::vector<int64_t> src);

}  // namespace epctx::compile
