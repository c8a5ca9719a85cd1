#include "exec/kernels/elementwise/elementwise_ops.h"
#include "exec/kernels/families.h"

namespace epctx::exec::kernels {

void RegisterElementwiseKernels(KernelRegistry& registry) {
  RegisterBinaryArithmetic(registry);
  RegisterActivations(registry);
  RegisterClip(registry);
  RegisterIdentityDropout(registry);
}

}  // namespace epctx::exec::kernels
