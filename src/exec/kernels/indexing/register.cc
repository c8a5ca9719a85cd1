// Registration of the indexing/ kernel family: Slice, Expand, Tile, Pad, Split, Range,
// Gather*/Scatter*, NonZero, OneHot, Trilu, Compress, EyeLike, ReverseSequence, Unique.
#include "exec/kernels/families.h"
#include "exec/kernels/indexing/indexing_ops.h"

namespace epctx::exec::kernels {

void RegisterIndexingKernels(KernelRegistry& registry) {
  RegisterSlice(registry);
  RegisterExpand(registry);
  RegisterTile(registry);
  RegisterPad(registry);
  RegisterSplit(registry);
  RegisterRange(registry);
  RegisterConstantOfShape(registry);
  RegisterGatherElements(registry);
  RegisterGatherND(registry);
  RegisterScatterElements(registry);
  RegisterScatterND(registry);
  RegisterNonZero(registry);
  RegisterOneHot(registry);
  RegisterTrilu(registry);
  RegisterCompress(registry);
  RegisterEyeLike(registry);
  RegisterReverseSequence(registry);
  RegisterUnique(registry);
}

}  // namespace epctx::exec::kernels
