#include "compile/memory_planner.h"

#include <gtest/gtest.h>

#include <random>

namespace epctx::compile {
namespace {

// Every pair of values alive at the same time must occupy disjoint bytes.
void ExpectNoOverlap(const std::vector<Lifetime>& values, const ArenaPlan& plan) {
  ASSERT_EQ(plan.offsets.size(), values.size());
  for (size_t a = 0; a < values.size(); ++a) {
    EXPECT_EQ(plan.offsets[a] % 64, 0u);
    EXPECT_LE(plan.offsets[a] + values[a].bytes, plan.arena_bytes);
    for (size_t b = a + 1; b < values.size(); ++b) {
      bool same_time = values[a].first <= values[b].last && values[b].first <= values[a].last;
      bool same_bytes = plan.offsets[a] < plan.offsets[b] + values[b].bytes &&
                        plan.offsets[b] < plan.offsets[a] + values[a].bytes;
      EXPECT_FALSE(same_time && same_bytes) << "values " << a << " and " << b << " collide";
    }
  }
}

TEST(MemoryPlanner, ChainReusesMemory) {
  // x0 -> x1 -> x2 -> x3: each value dies when the next is made, so two slots suffice.
  std::vector<Lifetime> values = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  ArenaPlan plan = PlanArena(values, 64);
  ExpectNoOverlap(values, plan);
  EXPECT_EQ(plan.arena_bytes, 2 * 1024u);
}

TEST(MemoryPlanner, AllAliveNeedsTheSum) {
  std::vector<Lifetime> values = {{100, 0, 9}, {200, 1, 9}, {300, 2, 9}};
  ArenaPlan plan = PlanArena(values, 64);
  ExpectNoOverlap(values, plan);
  EXPECT_EQ(plan.arena_bytes, 128u + 256u + 320u);
}

TEST(MemoryPlanner, RandomGraphsNeverCollide) {
  std::mt19937 rng(1234);
  for (int iteration = 0; iteration < 200; ++iteration) {
    std::vector<Lifetime> values;
    int n = 1 + static_cast<int>(rng() % 60);
    uint64_t sum = 0;
    for (int i = 0; i < n; ++i) {
      int first = static_cast<int>(rng() % 40);
      int last = first + static_cast<int>(rng() % 10);
      uint64_t bytes = rng() % 5000;
      values.push_back({bytes, first, last});
      sum += (std::max<uint64_t>(bytes, 1) + 63) / 64 * 64;
    }
    ArenaPlan plan = PlanArena(values, 64);
    ExpectNoOverlap(values, plan);
    EXPECT_LE(plan.arena_bytes, sum);
  }
}

}  // namespace
}  // namespace epctx::compile
