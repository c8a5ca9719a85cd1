// Registration functions of the norm files, called by RegisterNormalizationKernels.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels {

void RegisterSoftmax(KernelRegistry& registry);                    // softmax.cc
void RegisterLogSoftmax(KernelRegistry& registry);                 // log_softmax.cc
void RegisterHardmax(KernelRegistry& registry);                    // hardmax.cc
void RegisterLayerNormalization(KernelRegistry& registry);         // layer_norm.cc
void RegisterInstanceNormalization(KernelRegistry& registry);      // instance_norm.cc
void RegisterLrn(KernelRegistry& registry);                        // lrn.cc
void RegisterMeanVarianceNormalization(KernelRegistry& registry);  // mean_variance_norm.cc

}  // namespace epctx::exec::kernels
