#include "cli_util.h"

#include <CLI/CLI.hpp>
#include <set>
#include <sstream>

#include "util/status_macros.h"

namespace epctx::cli {

std::vector<std::string> SplitConfigEntries(const std::string& arg) {
  std::vector<std::string> out;
  std::istringstream in(arg);
  for (std::string entry; in >> entry;) out.push_back(std::move(entry));
  return out;
}

void AddConfigOption(CLI::App& app, std::vector<std::string>* entries) {
  CLI::Validator key_value(
      [](std::string& arg) -> std::string {
        for (const std::string& entry : SplitConfigEntries(arg)) {
          size_t bar = entry.find('|');
          if (bar == std::string::npos) {
            return "expected KEY|VALUE (key and value separated by '|'), as in "
                   "-C \"session.intra_op_num_threads|4\"; got '" +
                   entry + "'";
          }
          if (bar == 0) return "empty key in '" + entry + "'";
        }
        return {};
      },
      "");
  app.add_option("-C,--config", *entries,
                 "Session or compile options as \"KEY|VALUE\", several in one argument "
                 "separated by spaces, and repeatable, e.g. "
                 "-C \"session.intra_op_num_threads|4 epctx.fallback|deny\"")
      ->type_name("\"KEY|VALUE ...\"")
      ->check(key_value)
      ->allow_extra_args(false);
}

Result<SessionOptions> MakeSessionOptions(const std::vector<std::string>& entries,
                                          const std::string& given_with) {
  SessionOptions options;
  std::set<std::string> seen;
  for (const std::string& arg : entries) {
    for (const std::string& entry : SplitConfigEntries(arg)) {
      size_t bar = entry.find('|');
      std::string key = entry.substr(0, bar);
      std::string value = bar == std::string::npos ? std::string() : entry.substr(bar + 1);
      if (!seen.insert(key).second) {
        return EPCTX_ERROR(kInvalidArgument, "option '{}' is given twice {}", key, given_with);
      }
      options.AddConfigEntry(std::move(key), std::move(value));
    }
  }
  return options;
}

std::string FormatBytes(uint64_t bytes) {
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  value /= 1024;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {} ({} bytes)", value, kUnits[unit], bytes);
}

std::string FormatSeconds(double seconds) {
  if (seconds >= 1) return fmt::format("{:.2f} s", seconds);
  if (seconds >= 1e-3) return fmt::format("{:.2f} ms", seconds * 1e3);
  return fmt::format("{:.1f} us", seconds * 1e6);
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace epctx::cli
