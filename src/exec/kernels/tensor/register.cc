#include "exec/kernels/families.h"
#include "exec/kernels/tensor/tensor_ops.h"

namespace epctx::exec::kernels {

void RegisterTensorKernels(KernelRegistry& registry) {
  RegisterFlatten(registry);
  RegisterReshape(registry);
  RegisterTranspose(registry);
  RegisterConcat(registry);
  RegisterSqueeze(registry);
  RegisterUnsqueeze(registry);
  RegisterShape(registry);
  RegisterSize(registry);
  RegisterGather(registry);
}

}  // namespace epctx::exec::kernels
