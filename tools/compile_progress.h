// The progress line of `epctx compile`: a multi-GB model compiles for tens of seconds, and a
// terminal that shows nothing for that long looks hung.
#pragma once

#include <chrono>
#include <string>

#include "epctx/compiler.h"

namespace epctx::cli {

enum class ProgressMode {
  kAuto,    // on a terminal (stderr), once a compile has run for a second
  kAlways,  // from the start, one line per update, also to a pipe or file (logs)
  kNever,
};

// "[1/2] prefill.onnx: writing weights 12/64, 301.2 MiB (315830272 bytes) written, 3.10 s".
std::string DescribeCompileProgress(const CompileProgress& p, double seconds);

// Shows CompileProgress updates on stderr: each stage as it starts and, within a stage, at most
// one update per interval. On a terminal the line is rewritten in place and cleared at the end;
// elsewhere (kAlways) each update is a line of its own.
class CompileProgressLine {
 public:
  explicit CompileProgressLine(ProgressMode mode);
  ~CompileProgressLine();
  CompileProgressLine(const CompileProgressLine&) = delete;
  CompileProgressLine& operator=(const CompileProgressLine&) = delete;

  void Update(const CompileProgress& p);
  // Removes the line from the terminal (before the report is printed); the destructor does too.
  void Clear();

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_ = false;
  bool terminal_ = false;
  Clock::duration delay_{};  // nothing is shown before the compile has run this long
  Clock::time_point start_;
  Clock::time_point last_shown_;
  std::string last_stage_;  // model index and stage of the last update shown
  size_t shown_width_ = 0;  // characters of the line on the terminal now
};

}  // namespace epctx::cli
