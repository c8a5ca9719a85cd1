// The n-gram pool of TfIdfVectorizer: pool_int64s (or pool_strings, as token numbers) cut into
// 1-grams, 2-grams, ... by ngram_counts, each n-gram numbered by its position in the pool,
// searchable by its tokens. Built once when a session binds the node; every range in the attributes
// is checked here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "epctx/status.h"

namespace epctx::exec::kernels {

class NgramPool {
 public:
  // Only n-grams of a length in [min_length, max_length] are searchable; the others still take
  // their number. Refuses counts out of order or out of range, a run that is not a whole number
  // of n-grams, and an n-gram listed twice. Messages name the pool `pool_name`.
  static Result<NgramPool> Build(std::span<const int64_t> pool, std::span<const int64_t> counts,
                                 int64_t min_length, int64_t max_length,
                                 std::string_view pool_name);

  // The pool number of the n-gram `tokens`, or -1 when the pool does not list it.
  int64_t Find(const std::vector<int64_t>& tokens) const;
  // How many n-grams the pool numbers, searchable or not.
  int64_t size() const { return numbered_; }

 private:
  struct Hash {
    size_t operator()(const std::vector<int64_t>& tokens) const;
  };
  std::unordered_map<std::vector<int64_t>, int64_t, Hash> ids_;
  int64_t numbered_ = 0;
};

}  // namespace epctx::exec::kernels
