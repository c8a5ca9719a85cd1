// Registration of the rnn/ kernel family: RNN, GRU, LSTM.
#include "exec/kernels/families.h"

namespace epctx::exec::kernels {

void RegisterRecurrentKernels(KernelRegistry& registry) {
  (void)registry;  // no kernels in this family yet
}

}  // namespace epctx::exec::kernels
