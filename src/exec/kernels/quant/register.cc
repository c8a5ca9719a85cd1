// Registration of the quant/ kernel family: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv.
#include "exec/kernels/families.h"
#include "exec/kernels/quant/quant_ops.h"

namespace epctx::exec::kernels {

void RegisterQuantKernels(KernelRegistry& registry) {
  RegisterQuantizeLinear(registry);
  RegisterDynamicQuantizeLinear(registry);
  RegisterMatMulInteger(registry);
  RegisterQLinearMatMul(registry);
  RegisterConvInteger(registry);
  RegisterQLinearConv(registry);
}

}  // namespace epctx::exec::kernels
