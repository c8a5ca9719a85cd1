// Notices writes to a mapped blob file from any process: an inotify watch (IN_MODIFY: a write or
// a truncation) on the open file's inode. A file's size and mtime alone miss a rewrite that lands
// within one tick of the file system's timestamps; the watch does not. One inotify instance
// serves the whole process. Atomic replacement (a new file renamed over the path) is not a
// change: the watched inode is the old one, which stays as it was.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "util/file.h"

namespace epctx::loader {

class ChangeWatch {
 public:
  // Watches the file open as `fd`. Never fails: without inotify (or beyond its limits) the
  // watch is unavailable and changed() is always false, which `reason` then says.
  static ChangeWatch Watch(const UniqueFd& fd, std::string* reason);

  ChangeWatch() = default;
  ~ChangeWatch();
  ChangeWatch(ChangeWatch&& other) noexcept;
  ChangeWatch& operator=(ChangeWatch&& other) noexcept;
  ChangeWatch(const ChangeWatch&) = delete;
  ChangeWatch& operator=(const ChangeWatch&) = delete;

  bool available() const { return wd_ >= 0; }
  // Whether the file was written to or truncated since Watch (reads the events pending).
  bool changed() const;

 private:
  void Release();
  int wd_ = -1;
  std::shared_ptr<std::atomic<bool>> changed_;
};

}  // namespace epctx::loader
