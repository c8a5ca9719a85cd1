// `epctx perf --cold`: the files a session creation reads, dropped from the page cache before
// each creation, with the drop confirmed by mincore(2).
#pragma once

#include <string>
#include <vector>

#include "epctx/status.h"

namespace epctx::cli {

// What creating a session of `model` reads: the model itself and, for a context model, its blob
// and original model (empty when embedded / not recorded; absent files are skipped).
struct ModelFiles {
  std::string model;
  std::string blob;
  std::string original;
};
Result<ModelFiles> ResolveModelFiles(const std::string& model_path);

struct EvictionReport {
  bool confirmed = true;
  // One line per file still (partly) cached after the drop, e.g. "'x.epctx': 12 of 3401 pages".
  std::vector<std::string> unconfirmed;
};

// fsync + posix_fadvise(POSIX_FADV_DONTNEED) on each file, then mincore on a fresh mapping of each
// to confirm. Pages mapped by a live process stay cached; such files are reported, not an error.
Result<EvictionReport> EvictModelFiles(const ModelFiles& files);

}  // namespace epctx::cli
