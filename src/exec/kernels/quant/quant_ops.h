// Registration functions of the quant files, called by RegisterQuantKernels.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels {

void RegisterQuantizeLinear(KernelRegistry& registry);         // quantize_linear.cc (+ Dequantize)
void RegisterDynamicQuantizeLinear(KernelRegistry& registry);  // dynamic_quantize_linear.cc
void RegisterMatMulInteger(KernelRegistry& registry);          // matmul_integer.cc
void RegisterQLinearMatMul(KernelRegistry& registry);          // qlinear_matmul.cc
void RegisterConvInteger(KernelRegistry& registry);            // conv_integer.cc
void RegisterQLinearConv(KernelRegistry& registry);            // qlinear_conv.cc

}  // namespace epctx::exec::kernels
