// oneDNN's side of exec/kernel_runtime.h: its engine and primitive cache, its per-thread
// scratchpads, its bfloat16 kernels.
#include "exec/kernel_runtime.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include "exec/kernels/onednn/compute_type.h"
#include "exec/kernels/onednn/runtime.h"

namespace epctx::exec {

void InitializeKernelRuntime() {
  kernels::onednn::InitializeRuntime();
}

void WarmUpKernelMemory(const std::atomic<bool>& stop) {
  kernels::onednn::MapScratchpadAhead(stop);
}

void StartThreadTeam(int threads) {
  // The largest team this thread started: OpenMP keeps it for the thread's later regions.
  thread_local int started = 1;
  if (threads <= started || omp_in_parallel()) return;
  started = threads;
#pragma omp parallel num_threads(threads)
  {
    // Each thread of the team onto a core of its own, then free again (see the header).
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed) == 0 &&
        CPU_COUNT(&allowed) >= omp_get_num_threads()) {
      int wanted = omp_get_thread_num();
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, &allowed) || wanted-- > 0) continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0) {
          (void)pthread_setaffinity_np(pthread_self(), sizeof allowed, &allowed);
        }
        break;
      }
    }
  }
}

bool CanComputeInBf16() {
  return kernels::onednn::HasBf16Kernels();
}

}  // namespace epctx::exec
