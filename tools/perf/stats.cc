#include "perf/stats.h"

#include <algorithm>

namespace epctx::cli {

double Stats::Percentile(double p) const {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(p / 100.0 * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

Stats Summarize(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  double total = 0;
  for (double x : v) total += x;
  s.mean = total / static_cast<double>(v.size());
  s.sorted = std::move(v);
  return s;
}

}  // namespace epctx::cli
