#include "compile_progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include "cli_util.h"

namespace epctx::cli {
namespace {

constexpr std::chrono::milliseconds kTerminalDelay{1000};
constexpr std::chrono::milliseconds kTerminalInterval{250};
constexpr std::chrono::milliseconds kLogInterval{1000};

}  // namespace

std::string DescribeCompileProgress(const CompileProgress& p, double seconds) {
  std::string out;
  if (p.model_count > 1) out += fmt::format("[{}/{}] ", p.model_index + 1, p.model_count);
  out += std::filesystem::path(p.model).filename().string();
  out += ": " + p.stage;
  if (p.weights_total > 0) out += fmt::format(" {}/{}", p.weights_done, p.weights_total);
  if (p.bytes_written > 0) out += ", " + FormatBytes(p.bytes_written) + " written";
  out += ", " + FormatSeconds(seconds);
  return out;
}

CompileProgressLine::CompileProgressLine(ProgressMode mode) : start_(Clock::now()) {
  terminal_ = isatty(STDERR_FILENO) == 1;
  enabled_ = mode == ProgressMode::kAlways || (mode == ProgressMode::kAuto && terminal_);
  if (mode == ProgressMode::kAuto) delay_ = kTerminalDelay;
}

CompileProgressLine::~CompileProgressLine() {
  Clear();
}

void CompileProgressLine::Clear() {
  if (terminal_ && shown_width_ > 0) {
    std::fprintf(stderr, "\r%*s\r", static_cast<int>(shown_width_), "");
    std::fflush(stderr);
  }
  shown_width_ = 0;
}

void CompileProgressLine::Update(const CompileProgress& p) {
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  if (now - start_ < delay_) return;
  const std::string stage = fmt::format("{} {}", p.model_index, p.stage);
  const bool new_stage = stage != last_stage_;
  const auto interval = terminal_ ? kTerminalInterval : kLogInterval;
  if (!new_stage && now - last_shown_ < interval) return;
  last_stage_ = stage;
  last_shown_ = now;
  const std::string line =
      "epctx: " + DescribeCompileProgress(p, std::chrono::duration<double>(now - start_).count());
  if (terminal_) {
    // Padded over what the previous line left on the screen.
    const size_t width = std::max(line.size(), shown_width_);
    std::fprintf(stderr, "\r%-*s", static_cast<int>(width), line.c_str());
    shown_width_ = line.size();
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

}  // namespace epctx::cli
