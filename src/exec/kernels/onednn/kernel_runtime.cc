// oneDNN's side of exec/kernel_runtime.h: its engine and primitive cache, its per-thread
// scratchpads, its bfloat16 kernels.
#include "exec/kernel_runtime.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>

#include "exec/kernels/onednn/compute_type.h"
#include "exec/kernels/onednn/runtime.h"

namespace epctx::exec {

void InitializeKernelRuntime() {
  kernels::onednn::InitializeRuntime();
}

void WarmUpKernelMemory(const std::atomic<bool>& stop) {
  kernels::onednn::MapScratchpadAhead(stop);
}

namespace {

// libgomp's master spins at the team-start barrier until its new threads have arrived, and the
// kernel may queue a new thread on the master's own core: it then waits for a scheduler tick.
// While libgomp manages more threads than there are cores it spins only briefly and sleeps, so
// the team started for `threads` that take every core has one thread more; the next region of
// `threads` drops it.
int TeamToStart(int threads) {
  return threads >= omp_get_num_procs() ? threads + 1 : threads;
}

// The inverse, inside the team: the count it was started for.
int ThreadsOfTeam(int team) {
  return team > omp_get_num_procs() ? team - 1 : team;
}

}  // namespace

bool StartThreadTeam(int threads) {
  // The largest team this thread started: OpenMP keeps it for the thread's later regions.
  thread_local int started = 1;
  if (threads <= started || omp_in_parallel()) return false;
  started = threads;
#pragma omp parallel num_threads(TeamToStart(threads))
  {
    // Each thread of the team onto a core of its own, then free again (see the header); the
    // extra thread onto the last core, away from the master's. Nothing of the caller's stack is
    // read here: OpenMP's barriers order those reads before the caller's later writes, but
    // ThreadSanitizer does not see them (libgomp is not instrumented).
    const int asked = ThreadsOfTeam(omp_get_num_threads());
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed) == 0 &&
        CPU_COUNT(&allowed) >= asked) {
      int wanted = std::min(omp_get_thread_num(), CPU_COUNT(&allowed) - 1);
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
  return true;
}

bool CanComputeInBf16() {
  return kernels::onednn::HasBf16Kernels();
}

}  // namespace epctx::exec
