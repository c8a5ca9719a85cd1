// epctx.load_mode=auto: which load mode serves a blob file best depends on whether its pages are
// in the page cache already. Warm, a lazy mapping costs nothing and the first run finds every
// page; cold, the first run would fault the weights in one readahead window at a time (5.5 s for a
// 3.4 GB blob, against 1.7 s when io_uring reads them ahead in the background).
#pragma once

#include <cstdint>

#include "loader/engine_options.h"

namespace epctx::loader {

// Pages sampled (util/page_cache.h SampledPageCacheResidency), evenly spread over the file.
inline constexpr uint64_t kResidencySamples = 64;
// At or above this fraction of sampled pages in the page cache, a blob counts as warm.
inline constexpr double kWarmResidency = 0.9;

// auto's choice: mmap for a warm blob (an empty sample counts as warm), prefetch for a cold one.
LoadMode LoadModeForResidency(uint64_t resident_pages, uint64_t sampled_pages);

}  // namespace epctx::loader
