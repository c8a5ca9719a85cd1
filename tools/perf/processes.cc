#include "perf/processes.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "util/file.h"
#include "util/status_macros.h"

extern char** environ;

namespace epctx::cli {
namespace {

constexpr int kReportTimeoutMs = 600 * 1000;

// A started child: its pipes, and a destructor that never leaves it running or unreaped.
class ChildProcess {
 public:
  static Result<std::unique_ptr<ChildProcess>> Spawn(const std::vector<std::string>& args);
  ~ChildProcess() {
    to_child_.reset();
    if (pid_ > 0 && !Wait(/*block=*/false)) {
      ::kill(pid_, SIGKILL);
      Wait(/*block=*/true);
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // The child's one report line (without the newline).
  Result<std::string> ReadLine();
  // Closes the child's stdin (its signal to exit) and waits for it; kInternal unless it exits 0.
  Status Finish();

 private:
  ChildProcess(pid_t pid, UniqueFd to_child, UniqueFd from_child)
      : pid_(pid), to_child_(std::move(to_child)), from_child_(std::move(from_child)) {}
  // Reaps the child; false when `block` is false and it is still running.
  bool Wait(bool block) {
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == 0) return false;
    exit_status_ = r == pid_ ? status : -1;
    pid_ = -1;
    return true;
  }

  pid_t pid_ = -1;
  UniqueFd to_child_;
  UniqueFd from_child_;
  int exit_status_ = -1;
};

Result<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(const std::vector<std::string>& args) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) {
    return EPCTX_ERROR(kIoError, "pipe failed: {}", std::strerror(errno));
  }
  UniqueFd in_read(in[0]), in_write(in[1]);
  if (::pipe2(out, O_CLOEXEC) != 0) {
    return EPCTX_ERROR(kIoError, "pipe failed: {}", std::strerror(errno));
  }
  UniqueFd out_read(out[0]), out_write(out[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_read.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, out_write.get(), 1);
  std::string exe = "/proc/self/exe";
  std::vector<char*> argv;
  argv.push_back(exe.data());
  std::vector<std::string> copies = args;
  for (std::string& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  int err = ::posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    return EPCTX_ERROR(kIoError, "cannot start a child process: {}", std::strerror(err));
  }
  return std::unique_ptr<ChildProcess>(
      new ChildProcess(pid, std::move(in_write), std::move(out_read)));
}

Result<std::string> ChildProcess::ReadLine() {
  std::string line;
  char c = 0;
  while (true) {
    pollfd p{from_child_.get(), POLLIN, 0};
    int ready = ::poll(&p, 1, kReportTimeoutMs);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      return EPCTX_ERROR(kInternal, "child process {} did not report within {} s", pid_,
                         kReportTimeoutMs / 1000);
    }
    ssize_t n = ::read(from_child_.get(), &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return EPCTX_ERROR(kInternal,
                         "child process {} exited before reporting (see its errors above)", pid_);
    }
    if (c == '\n') return line;
    line.push_back(c);
  }
}

Status ChildProcess::Finish() {
  to_child_.reset();
  Wait(/*block=*/true);
  if (!WIFEXITED(exit_status_) || WEXITSTATUS(exit_status_) != 0) {
    return EPCTX_ERROR(kInternal, "a child process failed (wait status {})", exit_status_);
  }
  return Status::Ok();
}

}  // namespace

Result<ProcessesReport> MeasureProcesses(const std::vector<std::string>& child_args, int count,
                                         const BlobFileId& blob) {
  std::vector<std::unique_ptr<ChildProcess>> children;
  for (int i = 0; i < count; ++i) {
    EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<ChildProcess> child, ChildProcess::Spawn(child_args));
    children.push_back(std::move(child));
  }
  ProcessesReport report;
  report.count = count;
  for (auto& child : children) {
    EPCTX_ASSIGN_OR_RETURN(std::string line, child->ReadLine());
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("creation_ms") || !j.contains("first_inference_ms")) {
      return EPCTX_ERROR(kInternal, "child process {} reported '{}'", child->pid(), line);
    }
    ChildReport r;
    r.pid = child->pid();
    r.creation_ms = j["creation_ms"].get<double>();
    r.first_inference_ms = j["first_inference_ms"].get<double>();
    report.children.push_back(r);
  }
  // Every child is alive and idle now: their shared pages are divided among all of them.
  for (size_t i = 0; i < children.size(); ++i) {
    EPCTX_ASSIGN_OR_RETURN(
        report.children[i].memory,
        SampleMemory(children[i]->pid(), blob, "child " + std::to_string(i + 1)));
    const MemorySample& m = report.children[i].memory;
    report.rss_sum_bytes += m.rss_bytes;
    report.pss_sum_bytes += m.pss_bytes;
    report.anon_sum_bytes += m.anon_bytes;
    report.blob_mapped_rss_sum_bytes += m.blob_mapped_rss_bytes;
    report.blob_mapped_pss_sum_bytes += m.blob_mapped_pss_bytes;
  }
  for (auto& child : children) EPCTX_RETURN_IF_ERROR(child->Finish());
  return report;
}

void ReportToParent(double creation_ms, double first_inference_ms) {
  nlohmann::json j = {{"creation_ms", creation_ms}, {"first_inference_ms", first_inference_ms}};
  std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  std::fflush(stdout);
}

void WaitForParent() {
  char buf[64];
  while (true) {
    ssize_t n = ::read(0, buf, sizeof buf);
    if (n == 0 || (n < 0 && errno != EINTR)) return;
  }
}

}  // namespace epctx::cli
