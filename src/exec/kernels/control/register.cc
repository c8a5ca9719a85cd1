// Registration of the control/ kernel family: If, Loop, Scan. Their bodies are programs of their
// own in the blob, bound when the node's kernel is created.
#include "exec/kernels/control/control_ops.h"
#include "exec/kernels/families.h"

namespace epctx::exec::kernels {

void RegisterControlFlowKernels(KernelRegistry& registry) {
  RegisterIf(registry);
  RegisterLoop(registry);
  RegisterScan(registry);
}

}  // namespace epctx::exec::kernels
