// What the engine asks of its kernel libraries as a whole, apart from any one kernel: their
// process-wide objects, working memory faulted in ahead of a first run, and whether they can
// compute in bfloat16. The layers above exec/ (loader, io) use these and never a kernel family's
// own headers, so a family can change or join without touching them. Today oneDNN is the one
// family with process-wide state, and implements them (exec/kernels/onednn/kernel_runtime.cc).
#pragma once

#include <atomic>

namespace epctx::exec {

// Makes the kernel libraries' process-wide objects exist now. A component that registers an exit
// handler running kernels calls it first, so that those objects are destroyed after the handler.
void InitializeKernelRuntime();

// Faults in, for writing, the per-thread working memory (scratchpads) that the kernels made so far
// need, for the next run's thread to adopt, so that a first run does not zero-fill it as it goes.
// Stops between steps once `stop` is set; does nothing when no kernel needs such memory or a thread
// already holds enough.
void WarmUpKernelMemory(const std::atomic<bool>& stop);

// Starts the calling thread's team of `threads` kernel threads (OpenMP's, which oneDNN and our own
// loops share) unless it started one that large before, each thread on a core of its own to begin
// with: a new thread starts on its creator's core, and spinning there between parallel regions
// (OpenMP's idle threads spin a while before sleeping) took half the core from the thread it
// waited for, in slices of a scheduler tick, until the scheduler moved it. Where the team takes
// every core, the start asks for one thread more (see the definition); later regions of
// `threads` drop it. Returns whether it started one.
bool StartThreadTeam(int threads);

// Whether this process can compute matrix products and convolutions in bfloat16 (the CPU's
// instructions, within epctx.target_isa and EPCTX_CPU_FEATURES_MASK).
bool CanComputeInBf16();

}  // namespace epctx::exec
