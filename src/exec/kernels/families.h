// Registration functions of the kernel families (one folder each under src/exec/kernels/).
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels {

void RegisterElementwiseKernels(KernelRegistry& registry);  // elementwise/
void RegisterNnKernels(KernelRegistry& registry);           // nn/
void RegisterTensorKernels(KernelRegistry& registry);       // tensor/

}  // namespace epctx::exec::kernels
