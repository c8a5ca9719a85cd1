// The "epctx" spdlog logger, writing to stderr.
#pragma once

#include <spdlog/spdlog.h>

namespace epctx {

spdlog::logger& Logger();

}  // namespace epctx
