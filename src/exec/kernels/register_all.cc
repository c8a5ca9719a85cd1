// The one place that lists every kernel family; each family registers its own ops.
#include "exec/kernel.h"
#include "exec/kernels/families.h"

namespace epctx::exec {

void RegisterAllKernels(KernelRegistry& registry) {
  kernels::RegisterElementwiseKernels(registry);
  kernels::RegisterNnKernels(registry);
  kernels::RegisterTensorKernels(registry);
}

}  // namespace epctx::exec
