// oneDNN's side of exec/kernel_runtime.h: its engine and primitive cache, its per-thread
// scratchpads, its bfloat16 kernels.
#include "exec/kernel_runtime.h"

#include "exec/kernels/onednn/compute_type.h"
#include "exec/kernels/onednn/runtime.h"

namespace epctx::exec {

void InitializeKernelRuntime() {
  kernels::onednn::InitializeRuntime();
}

void WarmUpKernelMemory(const std::atomic<bool>& stop) {
  kernels::onednn::MapScratchpadAhead(stop);
}

bool CanComputeInBf16() {
  return kernels::onednn::HasBf16Kernels();
}

}  // namespace epctx::exec
