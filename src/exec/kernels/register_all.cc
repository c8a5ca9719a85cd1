// The one place that lists every kernel family; each family registers its own ops.
#include "exec/kernel.h"
#include "exec/kernels/families.h"

namespace epctx::exec {

void RegisterAllKernels(KernelRegistry& registry) {
  kernels::RegisterElementwiseKernels(registry);
  kernels::RegisterNnKernels(registry);
  kernels::RegisterTensorKernels(registry);
  kernels::RegisterReduceKernels(registry);
  kernels::RegisterIndexingKernels(registry);
  kernels::RegisterNormalizationKernels(registry);
  kernels::RegisterImageKernels(registry);
  kernels::RegisterRecurrentKernels(registry);
  kernels::RegisterQuantKernels(registry);
  kernels::RegisterLinalgKernels(registry);
  kernels::RegisterSignalKernels(registry);
  kernels::RegisterControlFlowKernels(registry);
  kernels::RegisterTextKernels(registry);
  kernels::RegisterDnnlKernels(registry);
}

}  // namespace epctx::exec
