// Registration functions of the elementwise files, called by RegisterElementwiseKernels.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels {

void RegisterBinaryOps(KernelRegistry& registry);        // binary_ops.cc
void RegisterActivations(KernelRegistry& registry);      // activations.cc
void RegisterClip(KernelRegistry& registry);             // clip.cc
void RegisterIdentityDropout(KernelRegistry& registry);  // identity_dropout.cc

}  // namespace epctx::exec::kernels
