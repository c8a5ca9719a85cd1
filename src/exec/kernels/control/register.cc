// Registration of the control/ kernel family: If, Loop, Scan.
#include "exec/kernels/families.h"

namespace epctx::exec::kernels {

void RegisterControlFlowKernels(KernelRegistry& registry) {
  (void)registry;  // no kernels in this family yet
}

}  // namespace epctx::exec::kernels
