// One background thread per process that makes the oneDNN primitives of newly created sessions
// (exec::BoundProgram::Prepare), so that session creation stays O(nodes) and the first run
// rarely waits for generated code.
//
// A session submits its program and keeps the returned ticket; destroying the ticket cancels the
// job and waits while the thread is in the middle of it, so the program outlives its use. The
// thread is stopped and joined at exit, before the libraries' static objects go away, and a
// child of fork() starts a thread of its own when it needs one.
#pragma once

#include <memory>

#include "exec/executor.h"

namespace epctx::loader {

class PrepareTicket {
 public:
  virtual ~PrepareTicket() = default;
};

// Queues `program` for preparation; the program must outlive the ticket.
std::unique_ptr<PrepareTicket> PrepareInBackground(const exec::BoundProgram* program);

}  // namespace epctx::loader
