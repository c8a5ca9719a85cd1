// Registration of the reduce/ kernel family: reductions, ArgMax/ArgMin, TopK, CumSum.
#include "exec/kernels/families.h"

namespace epctx::exec::kernels {

void RegisterReduceKernels(KernelRegistry& registry) {
  (void)registry;  // no kernels in this family yet
}

}  // namespace epctx::exec::kernels
