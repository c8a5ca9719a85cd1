// Registration of the rnn/ kernel family: RNN, GRU, LSTM.
#include "exec/kernels/families.h"
#include "exec/kernels/rnn/rnn_ops.h"

namespace epctx::exec::kernels {

void RegisterRecurrentKernels(KernelRegistry& registry) {
  RegisterRnn(registry);
  RegisterGru(registry);
  RegisterLstm(registry);
}

}  // namespace epctx::exec::kernels
