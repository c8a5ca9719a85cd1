#include "compile/memory_planner.h"

#include <algorithm>
#include <numeric>

namespace epctx::compile {

ArenaPlan PlanArena(const std::vector<Lifetime>& values, uint64_t alignment) {
  auto align = [alignment](uint64_t v) { return (v + alignment - 1) / alignment * alignment; };
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a].bytes > values[b].bytes; });

  ArenaPlan plan;
  plan.offsets.assign(values.size(), 0);
  struct Placed {
    uint64_t offset, end;
    int first, last;
  };
  std::vector<Placed> placed;
  for (size_t idx : order) {
    const Lifetime& v = values[idx];
    uint64_t size = align(std::max<uint64_t>(v.bytes, 1));
    // Byte ranges of placed values alive at the same time, by offset.
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (const Placed& p : placed) {
      if (p.first <= v.last && v.first <= p.last) busy.emplace_back(p.offset, p.end);
    }
    std::sort(busy.begin(), busy.end());
    uint64_t candidate = 0;
    uint64_t best = UINT64_MAX;
    uint64_t best_gap = UINT64_MAX;
    for (const auto& [start, end] : busy) {
      if (start >= candidate && start - candidate >= size && start - candidate < best_gap) {
        best = candidate;
        best_gap = start - candidate;
      }
      candidate = std::max(candidate, end);
    }
    if (best == UINT64_MAX) best = candidate;
    plan.offsets[idx] = best;
    placed.push_back({best, best + size, v.first, v.last});
    plan.arena_bytes = std::max(plan.arena_bytes, best + size);
  }
  return plan;
}

}  // namespace epctx::compile
