#include "util/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include "epctx/env.h"

namespace epctx {

spdlog::logger& Logger() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto l = spdlog::stderr_color_mt("epctx");
    l->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%n] [%l] %v");
    l->set_level(spdlog::level::warn);
    return l;
  }();
  return *logger;
}

void SetLogLevel(LogLevel level) {
  spdlog::level::level_enum l = spdlog::level::warn;
  switch (level) {
    case LogLevel::kDebug:
      l = spdlog::level::debug;
      break;
    case LogLevel::kInfo:
      l = spdlog::level::info;
      break;
    case LogLevel::kWarning:
      l = spdlog::level::warn;
      break;
    case LogLevel::kError:
      l = spdlog::level::err;
      break;
    case LogLevel::kOff:
      l = spdlog::level::off;
      break;
  }
  Logger().set_level(l);
}

}  // namespace epctx
