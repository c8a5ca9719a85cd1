// Registration of the linalg/ kernel family: Einsum, Det.
#include "exec/kernels/families.h"
#include "exec/kernels/linalg/linalg_ops.h"

namespace epctx::exec::kernels {

void RegisterLinalgKernels(KernelRegistry& registry) {
  RegisterEinsum(registry);
  RegisterDet(registry);
}

}  // namespace epctx::exec::kernels
