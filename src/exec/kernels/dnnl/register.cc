#include "exec/kernels/dnnl/dnnl_ops.h"
#include "exec/kernels/families.h"

namespace epctx::exec::kernels {

void RegisterDnnlKernels(KernelRegistry& registry) {
  onednn::RegisterDnnlConv(registry);
  onednn::RegisterDnnlReorder(registry);
  onednn::RegisterDnnlPool(registry);
  onednn::RegisterDnnlMatMul(registry);
  onednn::RegisterDnnlMatMulInteger(registry);
  onednn::RegisterDnnlIntegerConv(registry);
  onednn::RegisterChannelAffine(registry);
  onednn::RegisterDnnlBatchMatMul(registry);
}

}  // namespace epctx::exec::kernels
