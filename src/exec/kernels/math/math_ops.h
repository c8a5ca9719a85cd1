// Registration functions of the math files, called by RegisterMathKernels.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels {

void RegisterMathOps(KernelRegistry& registry);  // math_ops.cc

}  // namespace epctx::exec::kernels
