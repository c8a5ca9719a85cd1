// Contains SIGBUS in the file-backed part of blob mappings. When a mapped blob file is truncated
// (or the storage behind it fails), reading a page past its new end raises SIGBUS, which would
// kill the process. A process-wide handler maps a zero page over the faulting page of a guarded
// range and marks that guard damaged; the read then completes (with zeros), the run finishes, and
// the session reports the damage instead of returning outputs (see GuardedMapping). Faults
// outside every guarded range go to the handler that was installed before ours.
#pragma once

#include <cstddef>
#include <cstdint>

#include "epctx/status.h"

namespace epctx::loader {

class FaultGuard {
 public:
  // Ranges guarded at once, process-wide (one per mapped blob).
  static constexpr int kMaxGuardedRanges = 4096;

  // Guards `size` bytes at `begin` (page aligned). kUnsupported when every slot is in use.
  static Result<FaultGuard> Register(const void* begin, size_t size);
  // Faults contained so far, in all guards.
  static uint64_t ContainedFaults();

  FaultGuard() = default;
  ~FaultGuard();
  FaultGuard(FaultGuard&& other) noexcept;
  FaultGuard& operator=(FaultGuard&& other) noexcept;
  FaultGuard(const FaultGuard&) = delete;
  FaultGuard& operator=(const FaultGuard&) = delete;

  // A fault in the range was contained: some of its pages now read as zeros.
  bool damaged() const;

 private:
  explicit FaultGuard(int slot) : slot_(slot) {}
  void Release();
  int slot_ = -1;
};

}  // namespace epctx::loader
