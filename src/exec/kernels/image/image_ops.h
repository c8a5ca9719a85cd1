// Registration functions of the image files, called by RegisterImageKernels.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels {

void RegisterResize(KernelRegistry& registry);      // resize.cc: Resize, Upsample
void RegisterDepthSpace(KernelRegistry& registry);  // depth_space.cc: DepthToSpace, SpaceToDepth
void RegisterMaxUnpool(KernelRegistry& registry);   // max_unpool.cc
void RegisterRoiAlign(KernelRegistry& registry);    // roi_align.cc
void RegisterGridSample(KernelRegistry& registry);  // grid_sample.cc
void RegisterNonMaxSuppression(KernelRegistry& registry);  // non_max_suppression.cc

}  // namespace epctx::exec::kernels
