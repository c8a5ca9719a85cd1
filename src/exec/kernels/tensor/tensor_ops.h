// Registration functions of the tensor (data movement) files, called by RegisterTensorKernels.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels {

void RegisterFlatten(KernelRegistry& registry);    // flatten.cc
void RegisterReshape(KernelRegistry& registry);    // reshape.cc
void RegisterTranspose(KernelRegistry& registry);  // transpose.cc
void RegisterConcat(KernelRegistry& registry);     // concat.cc
void RegisterSqueeze(KernelRegistry& registry);    // squeeze.cc
void RegisterUnsqueeze(KernelRegistry& registry);  // unsqueeze.cc
void RegisterShape(KernelRegistry& registry);      // shape_of.cc
void RegisterSize(KernelRegistry& registry);       // size_of.cc
void RegisterGather(KernelRegistry& registry);     // gather.cc

}  // namespace epctx::exec::kernels
