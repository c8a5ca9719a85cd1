#include "exec/kernels/elementwise/elementwise_ops.h"
#include "exec/kernels/families.h"

namespace epctx::exec::kernels {

void RegisterElementwiseKernels(KernelRegistry& registry) {
  RegisterBinaryOps(registry);
  RegisterActivations(registry);
  RegisterClip(registry);
  RegisterIdentityDropout(registry);
}

}  // namespace epctx::exec::kernels
