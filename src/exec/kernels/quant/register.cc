// Registration of the quant/ kernel family: QuantizeLinear, DequantizeLinear, MatMulInteger,
// QLinear*, ConvInteger.
#include "exec/kernels/families.h"

namespace epctx::exec::kernels {

void RegisterQuantKernels(KernelRegistry& registry) {
  (void)registry;  // no kernels in this family yet
}

}  // namespace epctx::exec::kernels
