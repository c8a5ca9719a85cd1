// Background threads (one per core, at most 4, shared by the whole process) that make the oneDNN
// primitives of newly created sessions (BoundProgram::Prepare), so that session creation
// stays O(nodes) and the first run waits less for generated code. The threads share the nodes of
// a session, in program order, which is the order the run needs them; idle threads go on to the
// next session's.
//
// A session submits its program and keeps the returned ticket; destroying the ticket cancels the
// job and waits while a thread is in the middle of it, so the program outlives its use. The
// threads are stopped and joined at exit, before the libraries' static objects go away, and a
// child of fork() starts threads of its own when it needs them.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "exec/executor.h"

namespace epctx::exec {

class PrepareTicket {
 public:
  virtual ~PrepareTicket() = default;
  // The session's creation is over: the job's `also` may start, and more threads may share its
  // nodes (PrepareWorkers).
  virtual void CreationDone() = 0;
  // Called by a run before it starts: prepares the nodes no thread has taken yet on the calling
  // thread too, beside the pool's threads, and returns once every node is prepared (the `also`
  // goes on in the background, with AlsoStop::run_started set). PrepareWorkers::first_run_finishes
  // says when to.
  virtual void FinishNodes() = 0;
  // Whether every node is prepared (or the job was cancelled).
  virtual bool NodesDone() const = 0;
};

// Work the job also does, on one thread beside those on the nodes, once the session's creation is
// over: mapping the blob's weights, the arena and a scratchpad ahead of the first run, which is
// mostly the kernel filling page tables. Those madvise calls hold the process's mmap lock, so
// during creation they made the creating thread's own mmap and munmap calls wait (ResNet-50's
// first creation in a process took 5-9 ms instead of 1 in a quarter of the processes); hence
// after. It runs while the ticket lives (cancelling waits for it) and stops early (between chunks
// of its work) once `cancelled` is set.
struct AlsoStop {
  const std::atomic<bool>& cancelled;
  // Set with `cancelled`, and once a first run that takes every core starts (FinishNodes): work
  // that run would do itself as it goes (fault in the weights it reads) stops then, as a thread
  // beside the run's on the same cores made its parallel regions wait.
  const std::atomic<bool>& run_started;
};
using AlsoPrepare = std::function<void(const AlsoStop& stop)>;

// How many of the pool's threads share a session's nodes. Until CreationDone, all but one: the
// thread creating the session keeps a core (with a preparing thread on every core it lost its
// core for a scheduler tick or more). Then the cores the session's runs leave free (a 1-thread
// session's run keeps its core to itself); or, when its runs take every core, all of them, and
// the first run finishes the nodes (FinishNodes) with all but one of them before it starts:
// generating code beside a run on the same cores, the run's parallel regions waited for threads
// the code generation had taken their core from (first inference at 2 threads, median of 8
// alternating processes: MobileNetV2 17.0 -> 12.9 ms, EfficientNet-B0 22.4 -> 17.8,
// DenseNet-121 51.4 -> 41.4, ResNet-50 52.6 -> 48.1).
struct PrepareWorkers {
  int while_creating = 1;
  int after_creation = 1;
  bool first_run_finishes = false;
};
// For a session whose runs use `session_threads` threads (0: every core).
PrepareWorkers WorkersFor(int session_threads);

// Queues `program` for preparation (and `also`); the program must outlive the ticket.
std::unique_ptr<PrepareTicket> PrepareInBackground(const BoundProgram* program,
                                                   PrepareWorkers workers,
                                                   AlsoPrepare also = nullptr);

// Prepares `program` now, on the calling thread and the pool's threads together (every core),
// runs `also` on one of them at once, and returns when all is done.
void PrepareNow(const BoundProgram* program, AlsoPrepare also = nullptr);

}  // namespace epctx::exec
