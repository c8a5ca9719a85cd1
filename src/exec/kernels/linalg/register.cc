// Registration of the linalg/ kernel family: Einsum, Det.
#include "exec/kernels/families.h"

namespace epctx::exec::kernels {

void RegisterLinalgKernels(KernelRegistry& registry) {
  (void)registry;  // no kernels in this family yet
}

}  // namespace epctx::exec::kernels
