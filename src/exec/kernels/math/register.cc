// Registration of the math/ kernel family: unary/binary math, logic and comparison, Cast, Where.
#include "exec/kernels/families.h"

namespace epctx::exec::kernels {

void RegisterMathKernels(KernelRegistry& registry) {
  (void)registry;  // no kernels in this family yet
}

}  // namespace epctx::exec::kernels
