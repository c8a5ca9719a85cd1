#include "exec/kernels/text/ngram_pool.h"

#include <xxhash.h>

#include "util/status_macros.h"

namespace epctx::exec::kernels {

size_t NgramPool::Hash::operator()(const std::vector<int64_t>& tokens) const {
  return static_cast<size_t>(XXH3_64bits(tokens.data(), tokens.size() * sizeof(int64_t)));
}

Result<NgramPool> NgramPool::Build(std::span<const int64_t> pool, std::span<const int64_t> counts,
                                   int64_t min_length, int64_t max_length,
                                   std::string_view pool_name) {
  NgramPool result;
  const auto total = static_cast<int64_t>(pool.size());
  int64_t id = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const auto length = static_cast<int64_t>(i) + 1;
    const int64_t begin = counts[i];
    const int64_t end = i + 1 < counts.size() ? counts[i + 1] : total;
    if (begin < 0 || begin > end || end > total) {
      return EPCTX_ERROR(kInvalidArgument,
                         "ngram_counts puts the {}-grams at [{}, {}), outside {} of {} values or "
                         "out of order",
                         length, begin, end, pool_name, total);
    }
    if ((end - begin) % length != 0) {
      return EPCTX_ERROR(
          kInvalidArgument,
          "ngram_counts gives the {}-grams {} values, not a whole number of {}-grams", length,
          end - begin, length);
    }
    const bool searchable = length >= min_length && length <= max_length;
    for (int64_t at = begin; at < end; at += length, ++id) {
      if (!searchable) continue;
      std::vector<int64_t> tokens(pool.begin() + at, pool.begin() + at + length);
      if (!result.ids_.emplace(std::move(tokens), id).second) {
        return EPCTX_ERROR(kInvalidArgument, "{} lists {}-gram number {} twice", pool_name, length,
                           id);
      }
    }
  }
  result.numbered_ = id;
  return result;
}

int64_t NgramPool::Find(const std::vector<int64_t>& tokens) const {
  auto it = ids_.find(tokens);
  return it == ids_.end() ? -1 : it->second;
}

}  // namespace epctx::exec::kernels
