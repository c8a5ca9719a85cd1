#include "exec/kernels/elementwise/elementwise_ops.h"
#include "exec/kernels/families.h"

namespace epctx::exec::kernels {

void RegisterElementwiseKernels(KernelRegistry& registry) {
  elementwise::RegisterUnaryMath(registry);
  elementwise::RegisterActivations(registry);
  elementwise::RegisterClip(registry);
  elementwise::RegisterBinaryOps(registry);
  elementwise::RegisterVariadic(registry);
  elementwise::RegisterWhere(registry);
  elementwise::RegisterCast(registry);
  elementwise::RegisterIdentityDropout(registry);
}

}  // namespace epctx::exec::kernels
