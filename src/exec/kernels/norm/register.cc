// Registration of the norm/ kernel family: InstanceNormalization, LayerNormalization, LRN,
// LogSoftmax, Hardmax, ....
#include "exec/kernels/families.h"

namespace epctx::exec::kernels {

void RegisterNormalizationKernels(KernelRegistry& registry) {
  (void)registry;  // no kernels in this family yet
}

}  // namespace epctx::exec::kernels
