// Registration functions of the elementwise files, called by RegisterElementwiseKernels.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels {

void RegisterBinaryArithmetic(KernelRegistry& registry);  // binary_arithmetic.cc
void RegisterActivations(KernelRegistry& registry);       // activations.cc
void RegisterClip(KernelRegistry& registry);              // clip.cc
void RegisterIdentityDropout(KernelRegistry& registry);   // identity_dropout.cc

}  // namespace epctx::exec::kernels
