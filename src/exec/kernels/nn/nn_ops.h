// Registration functions of the nn files, called by RegisterNnKernels.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels {

void RegisterConv(KernelRegistry& registry);                // conv.cc
void RegisterGemm(KernelRegistry& registry);                // gemm.cc
void RegisterMatMul(KernelRegistry& registry);              // matmul.cc
void RegisterBatchNormalization(KernelRegistry& registry);  // batch_norm.cc
void RegisterPool(KernelRegistry& registry);                // pool.cc
void RegisterGlobalPool(KernelRegistry& registry);          // global_pool.cc
void RegisterConvTranspose(KernelRegistry& registry);       // conv_transpose.cc
void RegisterLpPool(KernelRegistry& registry);              // lp_pool.cc: LpPool, GlobalLpPool

}  // namespace epctx::exec::kernels
