#include "loader/blob_change_watch.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "util/status_macros.h"

namespace epctx::loader {
namespace {

// The process's inotify instance and, per watch descriptor (one per inode), the flags of the
// ChangeWatch objects on it: each starts clear when it is made, so a file changed once can be
// loaded again and watched afresh.
class Watcher {
 public:
  static Watcher& Global() {
    static Watcher* watcher = new Watcher();
    return *watcher;
  }

  int Add(const UniqueFd& fd, const std::shared_ptr<std::atomic<bool>>& flag, std::string* reason) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (inotify_fd_ < 0) {
      inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
      if (inotify_fd_ < 0) {
        *reason = fmt::format("inotify_init1 failed: {}", std::strerror(errno));
        return -1;
      }
    }
    Drain();  // events of earlier watchers of this inode are not this one's
    // The magic link names the open file itself, whatever its path names now.
    std::string self = fmt::format("/proc/self/fd/{}", fd.get());
    int wd = ::inotify_add_watch(inotify_fd_, self.c_str(), IN_MODIFY);
    if (wd < 0) {
      *reason = fmt::format("inotify_add_watch failed: {}", std::strerror(errno));
      return -1;
    }
    watchers_[wd].push_back(flag);
    return wd;
  }

  void Remove(int wd, const std::shared_ptr<std::atomic<bool>>& flag) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = watchers_.find(wd);
    if (it == watchers_.end()) return;
    std::erase(it->second, flag);
    if (it->second.empty()) {
      ::inotify_rm_watch(inotify_fd_, wd);
      watchers_.erase(it);
    }
  }

  void Poll() {
    std::lock_guard<std::mutex> lock(mutex_);
    Drain();
  }

 private:
  // Reads every pending event; a modification marks every watcher of its inode.
  void Drain() {
    alignas(inotify_event) char buffer[4096];
    while (true) {
      ssize_t n = ::read(inotify_fd_, buffer, sizeof buffer);
      if (n <= 0) return;  // EAGAIN: nothing pending
      for (char* p = buffer; p < buffer + n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(p);
        if ((e->mask & IN_Q_OVERFLOW) != 0) {
          // Events were lost: any file may have changed.
          for (auto& [wd, flags] : watchers_) MarkAll(flags);
        } else if ((e->mask & IN_MODIFY) != 0) {
          auto it = watchers_.find(e->wd);
          if (it != watchers_.end()) MarkAll(it->second);
        }
        p += sizeof(inotify_event) + e->len;
      }
    }
  }

  static void MarkAll(const std::vector<std::shared_ptr<std::atomic<bool>>>& flags) {
    for (const auto& f : flags) f->store(true);
  }

  std::mutex mutex_;
  int inotify_fd_ = -1;
  std::map<int, std::vector<std::shared_ptr<std::atomic<bool>>>> watchers_;
};

}  // namespace

ChangeWatch ChangeWatch::Watch(const UniqueFd& fd, std::string* reason) {
  ChangeWatch watch;
  auto flag = std::make_shared<std::atomic<bool>>(false);
  int wd = Watcher::Global().Add(fd, flag, reason);
  if (wd < 0) return watch;
  watch.wd_ = wd;
  watch.changed_ = std::move(flag);
  return watch;
}

ChangeWatch::~ChangeWatch() {
  Release();
}

ChangeWatch::ChangeWatch(ChangeWatch&& other) noexcept
    : wd_(other.wd_), changed_(std::move(other.changed_)) {
  other.wd_ = -1;
}

ChangeWatch& ChangeWatch::operator=(ChangeWatch&& other) noexcept {
  if (this != &other) {
    Release();
    wd_ = other.wd_;
    changed_ = std::move(other.changed_);
    other.wd_ = -1;
  }
  return *this;
}

bool ChangeWatch::changed() const {
  if (wd_ < 0) return false;
  if (changed_->load()) return true;
  Watcher::Global().Poll();
  return changed_->load();
}

void ChangeWatch::Release() {
  if (wd_ >= 0) Watcher::Global().Remove(wd_, changed_);
  wd_ = -1;
  changed_.reset();
}

}  // namespace epctx::loader
