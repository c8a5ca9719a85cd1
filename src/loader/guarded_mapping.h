// A blob file mapped for the mmap, populate and prefetch load modes, made safe against the file
// changing underneath it:
//  - everything but the WEIGHTS section (the header page, PROGRAMS, MANIFEST) is copied into
//    private memory at the same addresses before it is verified, so the programs the executor
//    follows stay the verified ones whatever happens to the file (they are small: O(nodes));
//  - the weights stay shared with the page cache, under a FaultGuard: a truncated file reads as
//    zeros instead of killing the process;
//  - a ChangeWatch, the damage flag and the file's identity tell CheckIntact() whether the bytes
//    a run read were the ones loaded.
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <string>

#include "epctx/status.h"
#include "loader/blob_change_watch.h"
#include "loader/blob_fault_guard.h"
#include "util/file.h"

namespace epctx::loader {

class GuardedMapping {
 public:
  static Result<std::unique_ptr<GuardedMapping>> Open(const std::string& path, bool populate);

  std::span<const std::byte> bytes() const { return file_.bytes(); }
  const FileIdentity& identity() const { return file_.identity(); }
  int fd() const { return fd_.get(); }

  // OK while the file is as it was opened; kIoError naming it once it was written to, truncated
  // (a fault was contained) or otherwise changed.
  Status CheckIntact() const;
  // A contained fault or a change already noticed: no system call.
  bool known_damaged() const;

 private:
  GuardedMapping() = default;

  // Destroyed bottom-up: the guard goes before the mapping it covers.
  std::string path_;
  UniqueFd fd_;
  ChangeWatch watch_;
  MappedFile file_;
  FaultGuard guard_;
  mutable std::atomic<bool> changed_{false};
};

}  // namespace epctx::loader
