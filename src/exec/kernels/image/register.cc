// Registration of the image/ kernel family: Resize, Upsample, DepthToSpace, SpaceToDepth,
// MaxUnpool, RoiAlign, GridSample, NonMaxSuppression.
#include "exec/kernels/families.h"
#include "exec/kernels/image/image_ops.h"

namespace epctx::exec::kernels {

void RegisterImageKernels(KernelRegistry& registry) {
  RegisterResize(registry);
  RegisterDepthSpace(registry);
  RegisterMaxUnpool(registry);
  RegisterRoiAlign(registry);
  RegisterGridSample(registry);
  RegisterNonMaxSuppression(registry);
}

}  // namespace epctx::exec::kernels
