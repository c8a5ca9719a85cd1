// Registration of the reduce/ kernel family: reductions, ArgMax/ArgMin, TopK, CumSum.
#include "exec/kernels/families.h"
#include "exec/kernels/reduce/reduce_ops.h"

namespace epctx::exec::kernels {

void RegisterReduceKernels(KernelRegistry& registry) {
  RegisterReductions(registry);
  RegisterArgReduce(registry);
  RegisterTopK(registry);
  RegisterCumSum(registry);
}

}  // namespace epctx::exec::kernels
