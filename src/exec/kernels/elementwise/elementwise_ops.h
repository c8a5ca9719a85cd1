// Registration functions of the elementwise files, called by RegisterElementwiseKernels.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels::elementwise {

void RegisterUnaryMath(KernelRegistry& registry);        // unary_math.cc
void RegisterActivations(KernelRegistry& registry);      // activations.cc
void RegisterClip(KernelRegistry& registry);             // clip.cc
void RegisterBinaryOps(KernelRegistry& registry);        // binary_ops.cc
void RegisterVariadic(KernelRegistry& registry);         // variadic.cc
void RegisterWhere(KernelRegistry& registry);            // where.cc
void RegisterCast(KernelRegistry& registry);             // cast.cc
void RegisterIdentityDropout(KernelRegistry& registry);  // identity_dropout.cc

}  // namespace epctx::exec::kernels::elementwise
