#include "loader/kernel_preparer.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "exec/kernels/dnnl/runtime.h"

namespace epctx::loader {
namespace {

struct Job {
  const exec::BoundProgram* program = nullptr;
  AlsoPrepare also;
  std::atomic<bool> also_taken{false};
  std::atomic<bool> stop{false};
  std::atomic<size_t> next_node{0};
  int running = 0;       // threads working on it; guarded by the preparer's mutex
  bool claimed = false;  // every node taken; guarded by the preparer's mutex
};

// A thread's share of `job`: its `also` (for the first thread to arrive), then nodes not yet
// taken.
void Work(Job& job) {
  if (job.also && !job.also_taken.exchange(true) && !job.stop.load(std::memory_order_relaxed)) {
    job.also(job.stop);
  }
  job.program->Prepare(job.stop, job.next_node);
}

// Generating code is CPU-bound and the first run waits for it: one thread per core (at most 4)
// shares the nodes of the job at the head of the queue.
int ThreadCount() {
  const unsigned cores = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(cores, 1u, 4u));
}

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
    if (threads_.empty()) {
      for (int i = 0; i < ThreadCount(); ++i)
        threads_.push_back(new std::thread([this] { Serve(); }));
    }
    queue_.push_back(job);
    wake_.notify_one();
  }

  // Cancels `job` and returns once the thread no longer works on it.
  void Cancel(Job& job) {
    job.stop.store(true, std::memory_order_relaxed);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return job.running == 0; });
  }

  // Once the caller has taken the last node of `job`: dequeues it and returns when no thread
  // works on it any more.
  void Finish(const std::shared_ptr<Job>& job) {
    std::unique_lock<std::mutex> lock(mutex_);
    Dequeue(job);
    done_.wait(lock, [&] { return job->running == 0; });
  }

  void Shutdown() {
    std::vector<std::thread*> threads;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      shut_down_ = true;
      for (const std::shared_ptr<Job>& job : queue_) job->stop.store(true);
      queue_.clear();
      threads.swap(threads_);
      wake_.notify_all();
    }
    for (std::thread* thread : threads) {
      thread->join();
      delete thread;
    }
  }

  // In the child of fork(): the thread was not copied; forget it (and what it was doing).
  void AfterFork() {
    new (&mutex_) std::mutex();
    new (&wake_) std::condition_variable();
    new (&done_) std::condition_variable();
    threads_.clear();  // the parent's handles are not ours to join
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
      // The head job stays queued, so that idle threads join it, until its nodes are all taken.
      std::shared_ptr<Job> job = queue_.front();
      if (job->stop.load(std::memory_order_relaxed)) {
        queue_.pop_front();
        continue;
      }
      ++job->running;
      lock.unlock();
      Work(*job);
      lock.lock();
      // Back from Prepare: every node is taken (or the job was stopped).
      Dequeue(job);
      --job->running;
      done_.notify_all();
    }
  }

  // Takes a job whose nodes are all taken off the queue; the caller holds mutex_.
  void Dequeue(const std::shared_ptr<Job>& job) {
    if (job->claimed) return;
    job->claimed = true;
    auto it = std::find(queue_.begin(), queue_.end(), job);
    if (it != queue_.end()) queue_.erase(it);
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::vector<std::thread*> threads_;
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

std::unique_ptr<PrepareTicket> PrepareInBackground(const exec::BoundProgram* program,
                                                   AlsoPrepare also) {
  auto job = std::make_shared<Job>();
  job->program = program;
  job->also = std::move(also);
  Preparer::Instance().Submit(job);
  return std::make_unique<Ticket>(std::move(job));
}

void PrepareNow(const exec::BoundProgram* program, AlsoPrepare also) {
  auto job = std::make_shared<Job>();
  job->program = program;
  job->also = std::move(also);
  Preparer& preparer = Preparer::Instance();
  preparer.Submit(job);
  Work(*job);
  preparer.Finish(job);
}

}  // namespace epctx::loader
