#include "loader/page_residency.h"

namespace epctx::loader {

LoadMode LoadModeForResidency(uint64_t resident_pages, uint64_t sampled_pages) {
  if (sampled_pages == 0) return LoadMode::kMmap;
  const double fraction = static_cast<double>(resident_pages) / static_cast<double>(sampled_pages);
  return fraction >= kWarmResidency ? LoadMode::kMmap : LoadMode::kPrefetch;
}

}  // namespace epctx::loader
