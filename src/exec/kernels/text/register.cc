// Registration of the text/ kernel family: TfIdfVectorizer (integer tokens).
#include "exec/kernels/families.h"
#include "exec/kernels/text/text_ops.h"

namespace epctx::exec::kernels {

void RegisterTextKernels(KernelRegistry& registry) {
  RegisterTfIdfVectorizer(registry);
}

}  // namespace epctx::exec::kernels
