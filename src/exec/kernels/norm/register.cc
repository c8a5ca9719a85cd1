// Registration of the norm/ kernel family: InstanceNormalization, LayerNormalization, LRN,
// Softmax, LogSoftmax, Hardmax, MeanVarianceNormalization.
#include "exec/kernels/families.h"
#include "exec/kernels/norm/norm_ops.h"

namespace epctx::exec::kernels {

void RegisterNormalizationKernels(KernelRegistry& registry) {
  RegisterSoftmax(registry);
  RegisterLogSoftmax(registry);
  RegisterHardmax(registry);
  RegisterLayerNormalization(registry);
  RegisterInstanceNormalization(registry);
  RegisterLrn(registry);
  RegisterMeanVarianceNormalization(registry);
}

}  // namespace epctx::exec::kernels
