#include "exec/kernels/common/worker_pool.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace epctx::exec::kernels {
namespace {

// Loops arrive in quick succession (one per kernel); a brief spin before sleeping catches the
// next one without a futex round trip, yet is short enough to cost little on a busy machine.
constexpr int kIdleSpins = 2000;
constexpr int kWaitSpins = 1000;
constexpr size_t kMaxThreads = 256;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

class WorkerPool {
 public:
  void Request(const std::shared_ptr<ParallelLoop>& loop, int helpers) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const size_t wanted = std::min(static_cast<size_t>(helpers), kMaxThreads);
      while (threads_.size() < wanted) threads_.emplace_back([this] { Serve(); });
      for (size_t i = 0; i < wanted; ++i) queue_.push_back(loop);
      pending_.store(true, std::memory_order_release);
    }
    ready_.notify_all();
  }

 private:
  void Serve() {
    for (;;) {
      for (int i = 0; i < kIdleSpins && !pending_.load(std::memory_order_acquire); ++i) {
        CpuRelax();
      }
      std::shared_ptr<ParallelLoop> loop;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return !queue_.empty(); });
        loop = std::move(queue_.front());
        queue_.pop_front();
        if (queue_.empty()) pending_.store(false, std::memory_order_relaxed);
      }
      if (loop->next.load(std::memory_order_relaxed) >= loop->count) continue;
      const int worker = loop->next_worker.fetch_add(1);
      if (worker < loop->max_workers) loop->Work(worker);
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::shared_ptr<ParallelLoop>> queue_;
  std::atomic<bool> pending_{false};
  std::vector<std::thread> threads_;
};

// Never destroyed: its threads live as long as the process, and must not be joined by a
// static destructor while another thread may still post work.
WorkerPool& Pool() {
  static WorkerPool* pool = new WorkerPool();
  return *pool;
}

}  // namespace

void ParallelLoop::Work(int worker) {
  for (int64_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
    call(body, i, worker);
    if (done.fetch_add(1) + 1 == count) done.notify_all();
  }
}

void RequestHelpers(const std::shared_ptr<ParallelLoop>& loop, int helpers) {
  Pool().Request(loop, helpers);
}

void WaitForLoop(ParallelLoop& loop) {
  for (int i = 0; i < kWaitSpins; ++i) {
    if (loop.done.load(std::memory_order_acquire) == loop.count) return;
    CpuRelax();
  }
  for (int64_t d = loop.done.load(); d != loop.count; d = loop.done.load()) loop.done.wait(d);
}

}  // namespace epctx::exec::kernels
