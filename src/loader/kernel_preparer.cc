#include "loader/kernel_preparer.h"

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include "exec/kernels/dnnl/runtime.h"

namespace epctx::loader {
namespace {

struct Job {
  const exec::BoundProgram* program = nullptr;
  std::atomic<bool> stop{false};
  bool running = false;  // guarded by the preparer's mutex
};

class Preparer {
 public:
  static Preparer& Instance() {
    // Never destroyed: Shutdown (at exit) stops the thread; the object stays for late callers.
    static Preparer* preparer = new Preparer();
    return *preparer;
  }

  void Submit(const std::shared_ptr<Job>& job) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (shut_down_) return;
    if (thread_ == nullptr) {
      thread_ = new std::thread([this] { Serve(); });
    }
    queue_.push_back(job);
    wake_.notify_one();
  }

  // Cancels `job` and returns once the thread no longer works on it.
  void Cancel(Job& job) {
    job.stop.store(true, std::memory_order_relaxed);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return !job.running; });
  }

  void Shutdown() {
    std::thread* thread = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      shut_down_ = true;
      for (const std::shared_ptr<Job>& job : queue_) job->stop.store(true);
      if (current_ != nullptr) current_->stop.store(true);
      queue_.clear();
      thread = thread_;
      thread_ = nullptr;
      wake_.notify_all();
    }
    if (thread != nullptr) {
      thread->join();
      delete thread;
    }
  }

  // In the child of fork(): the thread was not copied; forget it (and what it was doing).
  void AfterFork() {
    new (&mutex_) std::mutex();
    new (&wake_) std::condition_variable();
    new (&done_) std::condition_variable();
    thread_ = nullptr;  // the parent's handle is not ours to join
    current_ = nullptr;
    queue_.clear();
  }

 private:
  Preparer() {
    exec::kernels::onednn::InitializeRuntime();  // its statics must outlive the exit handler
    std::atexit([] { Instance().Shutdown(); });
    pthread_atfork(nullptr, nullptr, [] { Instance().AfterFork(); });
  }

  void Serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return shut_down_ || !queue_.empty(); });
      if (shut_down_) return;
      std::shared_ptr<Job> job = std::move(queue_.front());
      queue_.pop_front();
      if (job->stop.load(std::memory_order_relaxed)) continue;
      job->running = true;
      current_ = job.get();
      lock.unlock();
      job->program->Prepare(job->stop);
      lock.lock();
      job->running = false;
      current_ = nullptr;
      done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::deque<std::shared_ptr<Job>> queue_;
  Job* current_ = nullptr;
  std::thread* thread_ = nullptr;
  bool shut_down_ = false;
};

class Ticket final : public PrepareTicket {
 public:
  explicit Ticket(std::shared_ptr<Job> job) : job_(std::move(job)) {}
  ~Ticket() override { Preparer::Instance().Cancel(*job_); }

 private:
  std::shared_ptr<Job> job_;
};

}  // namespace

std::unique_ptr<PrepareTicket> PrepareInBackground(const exec::BoundProgram* program) {
  auto job = std::make_shared<Job>();
  job->program = program;
  Preparer::Instance().Submit(job);
  return std::make_unique<Ticket>(std::move(job));
}

}  // namespace epctx::loader
