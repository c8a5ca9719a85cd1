// Registration of the math/ kernel family: unary/binary math, logic and comparison, Cast, Where.
#include "exec/kernels/families.h"
#include "exec/kernels/math/math_ops.h"

namespace epctx::exec::kernels {

void RegisterMathKernels(KernelRegistry& registry) {
  RegisterMathOps(registry);
}

}  // namespace epctx::exec::kernels
