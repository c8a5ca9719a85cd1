#include "perf/runs.h"

#include <sys/times.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <latch>
#include <mutex>
#include <thread>

#include "cli_util.h"
#include "util/status_macros.h"
#include "util/usable_cores.h"

namespace epctx::cli {
namespace {

// Process CPU time against wall time, as ORT's CPUUsage (posix/utils.cc) samples it.
class CpuUsage {
 public:
  CpuUsage() { start_wall_ = ::times(&start_); }
  int Percent() const {
    struct tms now {};
    clock_t wall = ::times(&now);
    if (wall <= start_wall_ || now.tms_utime < start_.tms_utime ||
        now.tms_stime < start_.tms_stime) {
      return -1;
    }
    double cpu = static_cast<double>((now.tms_utime - start_.tms_utime) +
                                     (now.tms_stime - start_.tms_stime));
    return static_cast<int>(100.0 * cpu / static_cast<double>(wall - start_wall_) / UsableCores());
  }

 private:
  struct tms start_ {};
  clock_t start_wall_ = 0;
};

// What the threads of one TimeRuns share.
class Runner {
 public:
  Runner(Session& session, const Inputs& inputs, const RunPlan& plan, ProgressLine& progress)
      : session_(session), inputs_(inputs), plan_(plan), progress_(progress) {}

  Clock::time_point start() const { return start_; }

  // Claims the next request of times mode; false when all are taken or a run failed.
  bool Claim() { return !failed_.load() && next_.fetch_add(1) < plan_.repeat; }

  bool TimeLeft() const { return !failed_.load() && SecondsSince(start_) < plan_.seconds; }

  // One timed request; false after a failure (this one's or another thread's).
  bool RunOnce() {
    Clock::time_point start = Clock::now();
    Status s = session_.Run(inputs_).status();
    double seconds = SecondsSince(start);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!s.ok()) {
      if (!failed_.exchange(true)) error_ = s;
      return false;
    }
    timing_.latency_s.push_back(seconds);
    size_t n = timing_.latency_s.size();
    if (plan_.verbose_out != nullptr) {
      std::fprintf(plan_.verbose_out, "iteration:%zu,time_cost:%g\n", n, seconds);
    }
    progress_.Update(plan_.by_time ? fmt::format("runs: {}, {:.0f} of {} s", n,
                                                 SecondsSince(start_), plan_.seconds)
                                   : fmt::format("runs {}/{}", n, plan_.repeat));
    return true;
  }

  // The loop of one thread. `claimed`: times mode, a request was claimed for it already.
  int Loop(bool claimed) {
    int runs = 0;
    if (plan_.by_time) {
      do {
        if (!RunOnce()) break;
        ++runs;
      } while (TimeLeft());
    } else {
      for (bool go = claimed; go; go = Claim()) {
        if (!RunOnce()) break;
        ++runs;
      }
    }
    return runs;
  }

  Result<RunTiming> Finish(double wall_s, int cpu) {
    if (failed_.load()) return error_;
    timing_.wall_s = wall_s;
    timing_.cpu_usage_percent = cpu;
    return std::move(timing_);
  }

  RunTiming& timing() { return timing_; }

 private:
  Session& session_;
  const Inputs& inputs_;
  const RunPlan& plan_;
  ProgressLine& progress_;
  const Clock::time_point start_ = Clock::now();
  std::atomic<int> next_{0};
  std::atomic<bool> failed_{false};
  std::mutex mutex_;  // guards timing_, error_ and progress_
  RunTiming timing_;
  Status error_;
};

}  // namespace

Result<RunTiming> TimeRuns(Session& session, const Inputs& inputs, const RunPlan& plan,
                           ProgressLine& progress) {
  CpuUsage cpu;
  Runner runner(session, inputs, plan, progress);
  if (plan.concurrent <= 1) {
    runner.timing().requests_per_thread = {runner.Loop(runner.Claim())};
    return runner.Finish(SecondsSince(runner.start()), cpu.Percent());
  }
  std::vector<int> per_thread(static_cast<size_t>(plan.concurrent), 0);
  std::latch together(plan.concurrent);
  std::vector<std::thread> threads;
  for (int t = 0; t < plan.concurrent; ++t) {
    threads.emplace_back([&, t] {
      bool claimed = !plan.by_time && runner.Claim();
      together.arrive_and_wait();
      per_thread[static_cast<size_t>(t)] = runner.Loop(claimed);
    });
  }
  for (std::thread& t : threads) t.join();
  runner.timing().requests_per_thread = per_thread;
  return runner.Finish(SecondsSince(runner.start()), cpu.Percent());
}

}  // namespace epctx::cli
