#include "loader/blob_fault_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>

#include "util/status_macros.h"

namespace epctx::loader {
namespace {

// Read by the signal handler without locks: a slot is published by storing `begin` last and
// retired by clearing `begin` first.
struct Slot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> damaged{false};
  std::atomic<bool> used{false};
};

Slot g_slots[FaultGuard::kMaxGuardedRanges];
std::atomic<uint64_t> g_contained{0};
uintptr_t g_page_size = 4096;
struct sigaction g_previous {};

void ChainToPrevious(int sig, siginfo_t* info, void* context) {
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
  } else {
    // The default action: returning re-executes the faulting access, which now kills.
    ::signal(sig, SIG_DFL);
  }
}

void OnSigbus(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Slot& slot : g_slots) {
    const uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    if (begin == 0 || addr < begin || addr >= slot.end.load(std::memory_order_relaxed)) continue;
    void* page = reinterpret_cast<void*>(addr & ~(g_page_size - 1));
    // mmap is async-signal-safe: the zero page replaces the vanished file page in place.
    if (::mmap(page, g_page_size, PROT_READ, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) !=
        MAP_FAILED) {
      slot.damaged.store(true, std::memory_order_release);
      g_contained.fetch_add(1, std::memory_order_relaxed);
      errno = saved_errno;
      return;
    }
    break;
  }
  errno = saved_errno;
  ChainToPrevious(sig, info, context);
}

Status InstallHandler() {
  static std::once_flag once;
  static int error = 0;
  std::call_once(once, [] {
    long page = ::sysconf(_SC_PAGESIZE);
    if (page > 0) g_page_size = static_cast<uintptr_t>(page);
    struct sigaction action {};
    action.sa_sigaction = OnSigbus;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    if (::sigaction(SIGBUS, &action, &g_previous) != 0) error = errno;
  });
  if (error != 0) {
    return EPCTX_ERROR(kInternal, "cannot install the SIGBUS handler: errno {}", error);
  }
  return Status::Ok();
}

}  // namespace

Result<FaultGuard> FaultGuard::Register(const void* begin, size_t size) {
  EPCTX_RETURN_IF_ERROR(InstallHandler());
  for (int i = 0; i < kMaxGuardedRanges; ++i) {
    bool expected = false;
    if (!g_slots[i].used.compare_exchange_strong(expected, true)) continue;
    Slot& slot = g_slots[i];
    slot.damaged.store(false);
    slot.end.store(reinterpret_cast<uintptr_t>(begin) + size);
    slot.begin.store(reinterpret_cast<uintptr_t>(begin), std::memory_order_release);
    return FaultGuard(i);
  }
  return EPCTX_ERROR(kUnsupported, "more than {} blob mappings at once", kMaxGuardedRanges);
}

uint64_t FaultGuard::ContainedFaults() {
  return g_contained.load();
}

FaultGuard::~FaultGuard() {
  Release();
}

FaultGuard::FaultGuard(FaultGuard&& other) noexcept : slot_(other.slot_) {
  other.slot_ = -1;
}

FaultGuard& FaultGuard::operator=(FaultGuard&& other) noexcept {
  if (this != &other) {
    Release();
    slot_ = other.slot_;
    other.slot_ = -1;
  }
  return *this;
}

bool FaultGuard::damaged() const {
  return slot_ >= 0 && g_slots[slot_].damaged.load(std::memory_order_acquire);
}

void FaultGuard::Release() {
  if (slot_ < 0) return;
  Slot& slot = g_slots[slot_];
  slot.begin.store(0, std::memory_order_release);
  slot.end.store(0);
  slot.used.store(false);
  slot_ = -1;
}

}  // namespace epctx::loader
