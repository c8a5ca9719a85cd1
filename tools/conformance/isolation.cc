#include "conformance/isolation.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "util/file.h"
#include "util/status_macros.h"

namespace epctx::cli::conformance {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kLogTailBytes = 16 * 1024;
// A runaway allocation in a broken kernel should fail in its child, not exhaust the machine.
// Sanitizer builds reserve terabytes of address space for shadow memory, so they get no limit.
constexpr rlim_t kChildAddressSpaceLimit = rlim_t{4} << 30;

struct Child {
  size_t index = 0;
  pid_t pid = -1;
  UniqueFd result_fd;
  UniqueFd log_fd;
  std::string result;
  std::string log;  // the last kLogTailBytes of its stdout and stderr
  Clock::time_point start;
  Clock::time_point deadline;
};

void LimitChildMemory() {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  rlimit limit{kChildAddressSpaceLimit, kChildAddressSpaceLimit};
  setrlimit(RLIMIT_AS, &limit);
#endif
}

void WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

TestOutcome RunTaskGuarded(const std::function<TestOutcome(size_t)>& task, size_t index) {
  try {
    return task(index);
  } catch (const std::exception& e) {
    return {TestStatus::kFailed, std::string("exception: ") + e.what()};
  } catch (...) {
    return {TestStatus::kFailed, "exception of unknown type"};
  }
}

// The child's side: never returns.
[[noreturn]] void RunChild(const std::function<TestOutcome(size_t)>& task, size_t index,
                           int result_fd, int log_fd) {
  dup2(log_fd, STDOUT_FILENO);
  dup2(log_fd, STDERR_FILENO);
  close(log_fd);
  LimitChildMemory();
  TestOutcome outcome = RunTaskGuarded(task, index);
  std::fflush(stdout);
  std::fflush(stderr);
  WriteAll(result_fd, std::string(TestStatusName(outcome.status)) + "\n" + outcome.message);
  _exit(0);
}

Result<Child> Spawn(size_t index, const std::function<TestOutcome(size_t)>& task,
                    double timeout_seconds) {
  int result_pipe[2], log_pipe[2];
  if (pipe2(result_pipe, O_CLOEXEC) != 0) {
    return EPCTX_ERROR(kIoError, "pipe: {}", std::strerror(errno));
  }
  UniqueFd result_read(result_pipe[0]), result_write(result_pipe[1]);
  if (pipe2(log_pipe, O_CLOEXEC) != 0) {
    return EPCTX_ERROR(kIoError, "pipe: {}", std::strerror(errno));
  }
  UniqueFd log_read(log_pipe[0]), log_write(log_pipe[1]);
  std::fflush(stdout);  // or the child would inherit, and later flush, buffered output
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return EPCTX_ERROR(kIoError, "fork: {}", std::strerror(errno));
  if (pid == 0) {
    result_read.reset();
    log_read.reset();
    RunChild(task, index, result_write.release(), log_write.release());
  }
  fcntl(result_read.get(), F_SETFL, O_NONBLOCK);
  fcntl(log_read.get(), F_SETFL, O_NONBLOCK);
  Child child;
  child.index = index;
  child.pid = pid;
  child.result_fd = std::move(result_read);
  child.log_fd = std::move(log_read);
  child.start = Clock::now();
  child.deadline = child.start + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(timeout_seconds));
  return child;
}

// Reads what `fd` has; closes it at end of file.
void Drain(UniqueFd& fd, std::string& into, size_t keep_last) {
  char buffer[4096];
  for (;;) {
    ssize_t n = read(fd.get(), buffer, sizeof buffer);
    if (n > 0) {
      into.append(buffer, static_cast<size_t>(n));
      if (keep_last > 0 && into.size() > 2 * keep_last) into.erase(0, into.size() - keep_last);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    fd.reset();  // end of file, or an error that makes the pipe useless
    return;
  }
}

std::string LastLine(const std::string& log) {
  size_t end = log.find_last_not_of(" \n\r\t");
  if (end == std::string::npos) return {};
  size_t begin = log.rfind('\n', end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  std::string line = log.substr(begin, end + 1 - begin);
  if (line.size() > 300) line = line.substr(0, 300) + "...";
  return line;
}

std::string WithLastLine(std::string message, const std::string& log) {
  std::string line = LastLine(log);
  if (!line.empty()) message += "; last output: " + line;
  return message;
}

TestOutcome OutcomeOf(const Child& child, int wait_status, bool timed_out, double timeout) {
  if (timed_out) {
    return {TestStatus::kFailed,
            WithLastLine(fmt::format("timeout after {} s", timeout), child.log)};
  }
  if (WIFSIGNALED(wait_status)) {
    int sig = WTERMSIG(wait_status);
    return {
        TestStatus::kFailed,
        WithLastLine(fmt::format("crashed with signal {} ({})", sig, strsignal(sig)), child.log)};
  }
  size_t newline = child.result.find('\n');
  std::optional<TestStatus> status;
  if (newline != std::string::npos) status = ParseTestStatus(child.result.substr(0, newline));
  if (!status.has_value()) {
    int code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
    return {TestStatus::kFailed,
            WithLastLine(fmt::format("exited with status {} without a result", code), child.log)};
  }
  return {*status, child.result.substr(newline + 1)};
}

int PollTimeoutMs(const std::vector<Child>& running) {
  Clock::time_point first = running.front().deadline;
  for (const Child& c : running) first = std::min(first, c.deadline);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(first - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(ms + 1, 0, 60'000));
}

}  // namespace

Status RunIsolated(size_t count, const IsolationOptions& options,
                   const std::function<TestOutcome(size_t)>& task,
                   const std::function<void(size_t, TestOutcome)>& done) {
  size_t jobs = static_cast<size_t>(std::max(1, options.jobs));
  std::vector<Child> running;
  size_t next = 0;
  Status error;
  while ((next < count && error.ok()) || !running.empty()) {
    while (error.ok() && next < count && running.size() < jobs) {
      auto child = Spawn(next, task, options.timeout_seconds);
      if (!child.ok()) {
        error = child.status();
        break;
      }
      running.push_back(std::move(*child));
      ++next;
    }
    if (running.empty()) break;

    std::vector<pollfd> fds;
    for (Child& c : running) {
      if (c.result_fd.valid()) fds.push_back({c.result_fd.get(), POLLIN, 0});
      if (c.log_fd.valid()) fds.push_back({c.log_fd.get(), POLLIN, 0});
    }
    if (poll(fds.data(), fds.size(), PollTimeoutMs(running)) < 0 && errno != EINTR) {
      return EPCTX_ERROR(kIoError, "poll: {}", std::strerror(errno));
    }

    for (size_t i = 0; i < running.size();) {
      Child& c = running[i];
      if (c.result_fd.valid()) Drain(c.result_fd, c.result, 0);
      if (c.log_fd.valid()) Drain(c.log_fd, c.log, kLogTailBytes);
      bool finished = !c.result_fd.valid() && !c.log_fd.valid();
      bool timed_out = !finished && Clock::now() >= c.deadline;
      if (!finished && !timed_out) {
        ++i;
        continue;
      }
      if (timed_out) kill(c.pid, SIGKILL);
      int wait_status = 0;
      while (waitpid(c.pid, &wait_status, 0) < 0 && errno == EINTR) {
      }
      TestOutcome outcome = OutcomeOf(c, wait_status, timed_out, options.timeout_seconds);
      outcome.seconds = std::chrono::duration<double>(Clock::now() - c.start).count();
      size_t index = c.index;
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      done(index, std::move(outcome));
    }
  }
  return error;
}

}  // namespace epctx::cli::conformance
