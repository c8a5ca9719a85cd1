// Registration of the image/ kernel family: ConvTranspose, LpPool, GlobalLpPool, Resize,
// Upsample, DepthToSpace, SpaceToDepth, MaxUnpool, RoiAlign, GridSample, NonMaxSuppression.
#include "exec/kernels/families.h"
#include "exec/kernels/image/image_ops.h"

namespace epctx::exec::kernels {

void RegisterImageKernels(KernelRegistry& registry) {
  RegisterResize(registry);
  RegisterConvTranspose(registry);
  RegisterDepthSpace(registry);
  RegisterLpPool(registry);
  RegisterMaxUnpool(registry);
  RegisterRoiAlign(registry);
  RegisterGridSample(registry);
  RegisterNonMaxSuppression(registry);
}

}  // namespace epctx::exec::kernels
