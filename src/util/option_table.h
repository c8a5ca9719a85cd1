// A table of string options ("key" -> parse into a struct field), shared by the modules that own
// options: each owns the keys of its struct, and the public entry points parse all tables at once,
// so an unknown key is refused with the whole list of known ones.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "epctx/status.h"

namespace epctx {

template <typename Options>
struct OptionKey {
  const char* name;
  const char* default_value;
  const char* meaning;
  std::function<Status(const std::string& value, Options& out)> apply;
};

// "0" or "1"; anything else names the key and the value given.
Result<bool> ParseBoolOption(const std::string& key, const std::string& value);
// A path (empty allowed); one holding a NUL byte is refused naming the key (see CheckPath).
Result<std::string> ParsePathOption(const std::string& key, const std::string& value);

// Applies each entry to `out` with the key of that name in `keys`; the first unknown key or bad
// value is the error, the unknown key's message listing every name in `keys`.
template <typename Options>
Status ApplyOptionEntries(const std::map<std::string, std::string>& entries,
                          const std::vector<OptionKey<Options>>& keys, Options& out);

// "  key (default "d"): meaning" lines, one per key, for --help.
template <typename Options>
std::string DescribeOptionKeys(const std::vector<OptionKey<Options>>& keys);

Status UnknownOptionError(const std::string& key, const std::vector<std::string>& known);
std::string DescribeOptionKey(const char* name, const char* default_value, const char* meaning);

template <typename Options>
Status ApplyOptionEntries(const std::map<std::string, std::string>& entries,
                          const std::vector<OptionKey<Options>>& keys, Options& out) {
  for (const auto& [key, value] : entries) {
    const OptionKey<Options>* found = nullptr;
    for (const OptionKey<Options>& k : keys) {
      if (key == k.name) found = &k;
    }
    if (found == nullptr) {
      std::vector<std::string> known;
      for (const OptionKey<Options>& k : keys) known.emplace_back(k.name);
      return UnknownOptionError(key, known);
    }
    Status applied = found->apply(value, out);
    if (!applied.ok()) return applied;
  }
  return Status::Ok();
}

template <typename Options>
std::string DescribeOptionKeys(const std::vector<OptionKey<Options>>& keys) {
  std::string out;
  for (const OptionKey<Options>& k : keys) {
    out += DescribeOptionKey(k.name, k.default_value, k.meaning);
  }
  return out;
}

}  // namespace epctx
