#include "exec/kernel_preparer.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "exec/kernel_runtime.h"
#include "util/usable_cores.h"

namespace epctx::exec {
namespace {

// What a thread takes up of a job: its `also`, or a share of its nodes.
enum class Task { kAlso, kNodes };

struct Job {
  const BoundProgram* program = nullptr;
  AlsoPrepare also;
  std::atomic<bool> stop{false};
  std::atomic<bool> run_started{false};  // AlsoStop::run_started
  std::atomic<size_t> next_node{0};
  // Guarded by the preparer's mutex:
  int running = 0;             // threads working on it
  int running_nodes = 0;       // of which on its nodes
  int max_running_nodes = 1;   // how many may be
  bool creation_done = false;  // `also` may start
  bool also_taken = false;
  bool nodes_taken = false;  // a thread came back from its nodes: every node is taken
  bool dequeued = false;

  // What a thread may take up next, if anything; `nodes_only`: not the also, and the nodes even
  // past max_running_nodes.
  bool Offers(Task* task, bool nodes_only = false) const {
    if (!nodes_only && also && !also_taken && creation_done) {
      *task = Task::kAlso;
      return true;
    }
    if (!nodes_taken && (nodes_only || running_nodes < max_running_nodes)) {
      *task = Task::kNodes;
      return true;
    }
    return false;
  }
  bool Finished() const {
    return stop.load(std::memory_order_relaxed) || (nodes_taken && (!also || also_taken));
  }
};

// Generating code is CPU-bound and the first run waits for it: one thread per core (at most 4)
// shares the nodes of the jobs in the queue.
int ThreadCount() {
  return std::clamp(UsableCores(), 1, 4);
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
    wake_.notify_all();
  }

  // Creation of `job`'s session is over: its `also` may start, and up to `max_running_nodes`
  // threads share its nodes.
  void CreationDone(const std::shared_ptr<Job>& job, int max_running_nodes) {
    std::lock_guard<std::mutex> lock(mutex_);
    job->creation_done = true;
    job->max_running_nodes = max_running_nodes;
    wake_.notify_all();
  }

  bool NodesDone(const Job& job) {
    std::lock_guard<std::mutex> lock(mutex_);
    return job.stop.load(std::memory_order_relaxed) || (job.nodes_taken && job.running_nodes == 0);
  }

  // Cancels `job` and returns once no thread works on it any more.
  void Cancel(const std::shared_ptr<Job>& job) {
    job->stop.store(true, std::memory_order_relaxed);
    job->run_started.store(true, std::memory_order_relaxed);
    std::unique_lock<std::mutex> lock(mutex_);
    Dequeue(job);
    done_.wait(lock, [&] { return job->running == 0; });
  }

  // PrepareNow's calling thread: takes up what `job` offers until it offers nothing, then
  // returns once no thread works on it any more.
  void WorkUntilDone(const std::shared_ptr<Job>& job) {
    std::unique_lock<std::mutex> lock(mutex_);
    Task task;
    while (!job->Finished() && job->Offers(&task)) DoTask(job, task, lock);
    Dequeue(job);
    done_.wait(lock, [&] { return job->running == 0; });
  }

  // A run's thread: shares `job`'s nodes with at most `pool_threads` of the pool's threads and
  // returns once no thread works on them any more.
  void FinishNodes(const std::shared_ptr<Job>& job, int pool_threads) {
    std::unique_lock<std::mutex> lock(mutex_);
    job->max_running_nodes = pool_threads;
    Task task;
    if (!job->stop.load(std::memory_order_relaxed) && job->Offers(&task, /*nodes_only=*/true)) {
      DoTask(job, task, lock);
    }
    done_.wait(lock, [&] {
      return job->stop.load(std::memory_order_relaxed) ||
             (job->nodes_taken && job->running_nodes == 0);
    });
    job->run_started.store(true, std::memory_order_relaxed);
  }

  void Shutdown() {
    std::vector<std::thread*> threads;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      shut_down_ = true;
      for (const std::shared_ptr<Job>& job : queue_) {
        job->stop.store(true);
        job->run_started.store(true);
      }
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
    InitializeKernelRuntime();  // its statics must outlive the exit handler
    std::atexit([] { Instance().Shutdown(); });
    pthread_atfork(nullptr, nullptr, [] { Instance().AfterFork(); });
  }

  void Serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      std::shared_ptr<Job> job;
      Task task = Task::kNodes;
      wake_.wait(lock, [&] { return shut_down_ || (job = NextTask(&task)) != nullptr; });
      if (shut_down_) return;
      DoTask(job, task, lock);
    }
  }

  // The first queued job (in submission order) with something to take up; null if none. A job
  // stays queued, so that idle threads join it, until nothing is left to take. The caller holds
  // mutex_.
  std::shared_ptr<Job> NextTask(Task* task) const {
    for (const std::shared_ptr<Job>& job : queue_) {
      if (!job->stop.load(std::memory_order_relaxed) && job->Offers(task)) return job;
    }
    return nullptr;
  }

  // Does `task` of `job` with mutex_ released (`lock` holds it on entry and on return).
  void DoTask(const std::shared_ptr<Job>& job, Task task, std::unique_lock<std::mutex>& lock) {
    ++job->running;
    if (task == Task::kAlso) {
      job->also_taken = true;
    } else {
      ++job->running_nodes;
    }
    lock.unlock();
    if (task == Task::kAlso) {
      job->also(AlsoStop{job->stop, job->run_started});
    } else {
      job->program->Prepare(job->stop, job->next_node);
    }
    lock.lock();
    if (task == Task::kNodes) {
      // Every primitive this thread made is known now, with its scratchpad size; the `also`
      // may have looked before the largest was made (ResNet-50's 9 MiB one, of a Winograd
      // layer, was then faulted in by its first run: its three Winograd layers took 0.4-0.9 ms
      // more than later, 3.7 ms of excess over all nodes against 0.4 now; first run 46.5 ->
      // 45.3 ms at 2 threads, median of 8 alternating processes). After creation only, as the
      // `also`'s mapping (see AlsoPrepare); before the count drops, so that a first run finishing
      // the nodes (FinishNodes) starts with it made.
      if (job->creation_done && !job->stop.load(std::memory_order_relaxed)) {
        lock.unlock();
        WarmUpKernelMemory(job->stop);
        lock.lock();
      }
      --job->running_nodes;
      job->nodes_taken = true;  // Prepare returns once every node is taken (or on stop)
    }
    --job->running;
    if (job->Finished()) Dequeue(job);
    done_.notify_all();
  }

  // Takes `job` off the queue; the caller holds mutex_.
  void Dequeue(const std::shared_ptr<Job>& job) {
    if (job->dequeued) return;
    job->dequeued = true;
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
  Ticket(std::shared_ptr<Job> job, int after_creation)
      : job_(std::move(job)), after_creation_(after_creation) {}
  ~Ticket() override { Preparer::Instance().Cancel(job_); }
  void CreationDone() override { Preparer::Instance().CreationDone(job_, after_creation_); }
  void FinishNodes() override {
    Preparer::Instance().FinishNodes(job_, std::max(1, after_creation_ - 1));
  }
  bool NodesDone() const override { return Preparer::Instance().NodesDone(*job_); }

 private:
  std::shared_ptr<Job> job_;
  int after_creation_;
};

}  // namespace

PrepareWorkers WorkersFor(int session_threads) {
  const int pool = ThreadCount();
  const int cores = UsableCores();
  PrepareWorkers w;
  w.while_creating = std::max(1, pool - 1);
  w.first_run_finishes = session_threads <= 0 || session_threads >= cores;
  w.after_creation = w.first_run_finishes ? pool : std::clamp(cores - session_threads, 1, pool);
  return w;
}

std::unique_ptr<PrepareTicket> PrepareInBackground(const BoundProgram* program,
                                                   PrepareWorkers workers, AlsoPrepare also) {
  auto job = std::make_shared<Job>();
  job->program = program;
  job->also = std::move(also);
  job->max_running_nodes = std::max(1, workers.while_creating);
  Preparer::Instance().Submit(job);
  return std::make_unique<Ticket>(std::move(job), std::max(1, workers.after_creation));
}

void PrepareNow(const BoundProgram* program, AlsoPrepare also) {
  auto job = std::make_shared<Job>();
  job->program = program;
  job->also = std::move(also);
  job->creation_done = true;  // preparing is creation's work here
  job->max_running_nodes = ThreadCount() + 1;
  Preparer& preparer = Preparer::Instance();
  preparer.Submit(job);
  preparer.WorkUntilDone(job);
}

}  // namespace epctx::exec
