#include "perf/progress.h"

#include <unistd.h>

#include <cstdio>

namespace epctx::cli {
namespace {
constexpr double kQuietSeconds = 2.0;
constexpr double kEverySeconds = 1.0;
}  // namespace

ProgressLine::ProgressLine() : start_(Clock::now()), last_(start_), tty_(::isatty(2) == 1) {}

ProgressLine::~ProgressLine() {
  if (printed_ && tty_) std::fputc('\n', stderr);
}

void ProgressLine::Update(const std::string& what) {
  Clock::time_point now = Clock::now();
  double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < kQuietSeconds) return;
  if (printed_ && std::chrono::duration<double>(now - last_).count() < kEverySeconds) return;
  last_ = now;
  printed_ = true;
  std::fprintf(stderr, "%sepctx perf: %s (%.1f s)%s", tty_ ? "\r\033[K" : "", what.c_str(), elapsed,
               tty_ ? "" : "\n");
  std::fflush(stderr);
}

}  // namespace epctx::cli
