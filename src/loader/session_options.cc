#include "epctx/session.h"
#include "loader/engine_options.h"

namespace epctx {

SessionOptions& SessionOptions::AddConfigEntry(std::string key, std::string value) {
  entries_[std::move(key)] = std::move(value);
  return *this;
}

std::optional<std::string> SessionOptions::GetConfigEntry(const std::string& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

Status CheckConfigEntry(const std::string& key, const std::string& value) {
  // One parser for every key: the entry is checked exactly as a session would read it.
  SessionOptions one;
  one.AddConfigEntry(key, value);
  return loader::ParseEngineOptions(one).status();
}

}  // namespace epctx
