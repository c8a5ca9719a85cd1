// Registration of the image/ kernel family: ConvTranspose, LpPool, Resize, DepthToSpace,
// SpaceToDepth, ....
#include "exec/kernels/families.h"

namespace epctx::exec::kernels {

void RegisterImageKernels(KernelRegistry& registry) {
  (void)registry;  // no kernels in this family yet
}

}  // namespace epctx::exec::kernels
