// Registration functions of the oneDNN-backed kernels, called by RegisterDnnlKernels.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels::onednn {

void RegisterDnnlConv(KernelRegistry& registry);           // conv_kernel.cc
void RegisterDnnlReorder(KernelRegistry& registry);        // reorder_kernel.cc
void RegisterDnnlPool(KernelRegistry& registry);           // pool_kernel.cc
void RegisterDnnlMatMul(KernelRegistry& registry);         // matmul_kernel.cc
void RegisterDnnlMatMulInteger(KernelRegistry& registry);  // matmul_integer_kernel.cc
void RegisterDnnlIntegerConv(KernelRegistry& registry);    // integer_conv_kernel.cc
void RegisterDnnlBatchMatMul(KernelRegistry& registry);    // batch_matmul_kernel.cc
void RegisterChannelAffine(KernelRegistry& registry);      // channel_affine_kernel.cc

}  // namespace epctx::exec::kernels::onednn
