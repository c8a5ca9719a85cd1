// Registration functions of the linalg files, called by RegisterLinalgKernels.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels {

void RegisterEinsum(KernelRegistry& registry);  // einsum.cc
void RegisterDet(KernelRegistry& registry);     // det.cc

}  // namespace epctx::exec::kernels
