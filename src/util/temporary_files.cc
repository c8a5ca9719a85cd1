#include "util/temporary_files.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace epctx {
namespace {

constexpr int kSlots = 32;
constexpr size_t kMaxPath = 4096;

// kFree -> kFilling (one registering thread) -> kSet -> kFree.
enum SlotState : int { kFree = 0, kFilling = 1, kSet = 2 };

struct Slot {
  std::atomic<int> state{kFree};
  char path[kMaxPath];
};

Slot slots[kSlots];

void OnTerminationSignal(int signal) {
  RemoveRegisteredTemporaries();
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

}  // namespace

int RegisterTemporary(const std::string& path) {
  if (path.size() >= kMaxPath) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!slots[i].state.compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
    slots[i].state.store(kSet, std::memory_order_release);
    return i;
  }
  return -1;
}

void UnregisterTemporary(int slot) {
  if (slot >= 0 && slot < kSlots) slots[slot].state.store(kFree, std::memory_order_release);
}

void RemoveRegisteredTemporaries() {
  for (Slot& slot : slots) {
    if (slot.state.load(std::memory_order_acquire) == kSet) ::unlink(slot.path);
  }
}

void RemoveTemporariesOnTerminationSignals() {
  struct sigaction action {};
  action.sa_handler = OnTerminationSignal;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction previous {};
    // A signal the caller's parent set to be ignored (nohup) stays ignored.
    if (::sigaction(signal, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
    ::sigaction(signal, &action, nullptr);
  }
}

}  // namespace epctx
