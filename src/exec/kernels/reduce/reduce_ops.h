// Registration functions of the reduce/ files, called by RegisterReduceKernels.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels {

void RegisterReductions(KernelRegistry& registry);  // reductions.cc
void RegisterArgReduce(KernelRegistry& registry);   // arg_reduce.cc
void RegisterTopK(KernelRegistry& registry);        // top_k.cc
void RegisterCumSum(KernelRegistry& registry);      // cum_sum.cc

}  // namespace epctx::exec::kernels
