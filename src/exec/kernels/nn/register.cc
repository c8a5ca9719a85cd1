#include "exec/kernels/families.h"
#include "exec/kernels/nn/nn_ops.h"

namespace epctx::exec::kernels {

void RegisterNnKernels(KernelRegistry& registry) {
  RegisterConv(registry);
  RegisterGemm(registry);
  RegisterMatMul(registry);
  RegisterBatchNormalization(registry);
  RegisterPool(registry);
  RegisterGlobalPool(registry);
  RegisterConvTranspose(registry);
  RegisterLpPool(registry);
}

}  // namespace epctx::exec::kernels
