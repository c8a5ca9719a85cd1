// Registration of the signal/ kernel family: DFT, STFT, MelWeightMatrix. (BlackmanWindow,
// HannWindow and HammingWindow are ONNX functions the compiler inlines.)
#include "exec/kernels/families.h"
#include "exec/kernels/signal/signal_ops.h"

namespace epctx::exec::kernels {

void RegisterSignalKernels(KernelRegistry& registry) {
  RegisterDft(registry);
  RegisterStft(registry);
  RegisterMelWeightMatrix(registry);
}

}  // namespace epctx::exec::kernels
