// Summary statistics of timing samples for `epctx perf`.
#pragma once

#include <vector>

namespace epctx::cli {

struct Stats {
  double min = 0, median = 0, mean = 0, max = 0;
  std::vector<double> sorted;
  // Nearest-rank percentile, p in [0, 100]; 0 without samples.
  double Percentile(double p) const;
};

Stats Summarize(std::vector<double> samples);

}  // namespace epctx::cli
