// Registration functions of the control/ files, called by RegisterControlFlowKernels.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels {

void RegisterIf(KernelRegistry& registry);    // if.cc
void RegisterLoop(KernelRegistry& registry);  // loop.cc
void RegisterScan(KernelRegistry& registry);  // scan.cc

}  // namespace epctx::exec::kernels
