// An external data file of an original model, as a context model records it: a change to the
// file makes the blob stale as much as a change to the model file does.
#pragma once

#include <cstdint>
#include <string>

namespace epctx::compile {

struct ExternalDataRecord {
  std::string location;  // as the model names it: relative to the model's folder
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t hash = 0;  // XXH3-64 of the file's bytes
};

}  // namespace epctx::compile
