// A progress line on stderr for `epctx perf` runs that last: silent for the first ~2 seconds,
// then at most one update per second ("\r"-rewritten on a terminal, one line each otherwise).
#pragma once

#include <chrono>
#include <string>

namespace epctx::cli {

class ProgressLine {
 public:
  ProgressLine();
  ~ProgressLine();  // ends the line if one was printed
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // `what` like "latency runs 120/1000"; printed only when due.
  void Update(const std::string& what);

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
  Clock::time_point last_;
  bool printed_ = false;
  bool tty_ = false;
};

}  // namespace epctx::cli
