// Registration functions of the rnn files, called by RegisterRecurrentKernels.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels {

void RegisterRnn(KernelRegistry& registry);   // rnn.cc
void RegisterGru(KernelRegistry& registry);   // gru.cc
void RegisterLstm(KernelRegistry& registry);  // lstm.cc

}  // namespace epctx::exec::kernels
