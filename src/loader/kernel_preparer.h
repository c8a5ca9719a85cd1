// Background threads (one per core, at most 4, shared by the whole process) that make the oneDNN
// primitives of newly created sessions (exec::BoundProgram::Prepare), so that session creation
// stays O(nodes) and the first run waits less for generated code. The threads of the pool share
// the nodes of one session at a time, in program order, which is the order the run needs them.
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

namespace epctx::loader {

class PrepareTicket {
 public:
  virtual ~PrepareTicket() = default;
};

// Work the job also does, on the first thread that takes it up while the others start on the
// nodes: mapping the blob's weights ahead of the first run (BlobSource::MapAhead), which is
// mostly waiting for the page cache or the disk. It runs while the ticket lives (cancelling
// waits for it).
// It stops early (between chunks of its work) once `stop` is set.
using AlsoPrepare = std::function<void(const std::atomic<bool>& stop)>;

// Queues `program` for preparation (and `also`); the program must outlive the ticket.
std::unique_ptr<PrepareTicket> PrepareInBackground(const exec::BoundProgram* program,
                                                   AlsoPrepare also = nullptr);

// Prepares `program` now, on the calling thread and the pool's threads together (every core),
// runs `also` on one of them, and returns when all is done.
void PrepareNow(const exec::BoundProgram* program, AlsoPrepare also = nullptr);

}  // namespace epctx::loader
