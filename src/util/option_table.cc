#include "util/option_table.h"

#include <fmt/ranges.h>

#include "util/file.h"
#include "util/status_macros.h"

namespace epctx {

Result<bool> ParseBoolOption(const std::string& key, const std::string& value) {
  if (value == "1") return true;
  if (value == "0") return false;
  return EPCTX_ERROR(kInvalidArgument, "option {} must be \"0\" or \"1\", got \"{}\"", key, value);
}

Result<std::string> ParsePathOption(const std::string& key, const std::string& value) {
  EPCTX_RETURN_IF_ERROR(CheckPath(value, fmt::format("option {}", key)));
  return value;
}

Status UnknownOptionError(const std::string& key, const std::vector<std::string>& known) {
  return EPCTX_ERROR(kInvalidArgument, "unknown option \"{}\" (known: {})", key,
                     fmt::join(known, ", "));
}

std::string DescribeOptionKey(const char* name, const char* default_value, const char* meaning) {
  return fmt::format("  {} (default \"{}\"): {}\n", name, default_value, meaning);
}

}  // namespace epctx
