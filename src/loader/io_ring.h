// RAII for an io_uring instance (liburing): the ring is torn down with its owner.
#pragma once

#include <liburing.h>

#include <memory>

#include "epctx/status.h"

namespace epctx::loader {

class IoRing {
 public:
  // A ring with `entries` submission slots; kUnsupported when the kernel refuses io_uring
  // (too old, disabled by sysctl kernel.io_uring_disabled, or blocked by a seccomp filter).
  static Result<IoRing> Create(unsigned entries);

  IoRing(IoRing&&) noexcept = default;
  IoRing& operator=(IoRing&&) noexcept = default;
  ~IoRing() = default;

  io_uring* get() { return ring_.get(); }
  // Whether the kernel implements `opcode` (IORING_OP_*).
  bool Supports(int opcode);

 private:
  struct Deleter {
    void operator()(io_uring* ring) const;
  };
  explicit IoRing(std::unique_ptr<io_uring, Deleter> ring) : ring_(std::move(ring)) {}
  std::unique_ptr<io_uring, Deleter> ring_;
};

}  // namespace epctx::loader
