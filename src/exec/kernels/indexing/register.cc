// Registration of the indexing/ kernel family: Slice, Expand, Tile, Pad, Split, Range,
// Gather*/Scatter*, NonZero, OneHot, Trilu, ....
#include "exec/kernels/families.h"

namespace epctx::exec::kernels {

void RegisterIndexingKernels(KernelRegistry& registry) {
  (void)registry;  // no kernels in this family yet
}

}  // namespace epctx::exec::kernels
