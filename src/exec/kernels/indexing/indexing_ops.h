// Registration functions of the indexing/ files, called by RegisterIndexingKernels.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels {

void RegisterSlice(KernelRegistry& registry);            // slice.cc
void RegisterExpand(KernelRegistry& registry);           // expand.cc
void RegisterTile(KernelRegistry& registry);             // tile.cc
void RegisterPad(KernelRegistry& registry);              // pad.cc
void RegisterSplit(KernelRegistry& registry);            // split.cc
void RegisterRange(KernelRegistry& registry);            // range.cc
void RegisterConstantOfShape(KernelRegistry& registry);  // constant_of_shape.cc
void RegisterGatherElements(KernelRegistry& registry);   // gather_elements.cc
void RegisterGatherND(KernelRegistry& registry);         // gather_nd.cc
void RegisterScatterElements(KernelRegistry& registry);  // scatter_elements.cc
void RegisterScatterND(KernelRegistry& registry);        // scatter_nd.cc
void RegisterNonZero(KernelRegistry& registry);          // non_zero.cc
void RegisterOneHot(KernelRegistry& registry);           // one_hot.cc
void RegisterTrilu(KernelRegistry& registry);            // trilu.cc
void RegisterCompress(KernelRegistry& registry);         // compress.cc
void RegisterEyeLike(KernelRegistry& registry);          // eye_like.cc
void RegisterReverseSequence(KernelRegistry& registry);  // reverse_sequence.cc
void RegisterUnique(KernelRegistry& registry);           // unique.cc

}  // namespace epctx::exec::kernels
