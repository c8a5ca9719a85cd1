// The threads that ParallelFor borrows. A process-wide pool whose idle threads sleep after a
// short spin: OpenMP's default idle policy (libgomp spins for milliseconds, and the policy can
// only be changed through the environment before the process starts) made a 2-thread ResNet-50
// run 5 to 10 times slower than 1 thread whenever other processes shared the cores, because
// spinning threads burned the time slices their busy teammates needed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace epctx::exec::kernels {

// One parallel loop: indices are claimed one at a time by the calling thread and by whichever
// pool threads come to help. Completion is counted in indices, never in threads, so the caller
// never waits for a helper that has not started (or that a fork left behind); late helpers
// find nothing left and only touch this state, which they keep alive.
struct ParallelLoop {
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::atomic<int> next_worker{1};  // worker 0 is the caller
  int64_t count = 0;
  int max_workers = 1;
  void (*call)(void* body, int64_t index, int worker) = nullptr;
  void* body = nullptr;  // the caller's loop body; only used for claimed indices

  // Claims and runs indices until none are left.
  void Work(int worker);
};

// Asks up to `helpers` pool threads (started on first need) to join `loop`.
void RequestHelpers(const std::shared_ptr<ParallelLoop>& loop, int helpers);
// Returns once every index of `loop` has run.
void WaitForLoop(ParallelLoop& loop);

}  // namespace epctx::exec::kernels
