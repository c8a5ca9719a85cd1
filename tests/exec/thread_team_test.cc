// StartThreadTeam places each thread of a new team on a core of its own for a moment: every
// thread, the caller included, must get its own affinity back, or a user's thread (and the
// kernel threads) would stay pinned to one core. Where the team takes every core it starts one
// thread more, which the later regions of the asked size must not see.
#include <gtest/gtest.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <thread>
#include <vector>

#include "exec/kernel_runtime.h"

namespace epctx::exec {
namespace {

cpu_set_t AffinityOfThisThread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(pthread_getaffinity_np(pthread_self(), sizeof set, &set), 0);
  return set;
}

TEST(ThreadTeamTest, EveryThreadKeepsItsAffinity) {
  const cpu_set_t before = AffinityOfThisThread();
  if (CPU_COUNT(&before) < 2) GTEST_SKIP() << "needs 2 usable cores";
  // A thread of its own, so that no team of an earlier test on this thread is reused.
  std::thread([&before] {
    EXPECT_TRUE(StartThreadTeam(2));
    EXPECT_FALSE(StartThreadTeam(2)) << "a team of that size was started already";
    const cpu_set_t after = AffinityOfThisThread();
    EXPECT_TRUE(CPU_EQUAL(&before, &after)) << "the calling thread stayed pinned";
    const int max_threads = omp_get_max_threads();
    std::vector<int> counts(2, 0);
    int team_size = 0;
#pragma omp parallel num_threads(2)
    {
      const cpu_set_t mine = AffinityOfThisThread();
      counts[static_cast<size_t>(omp_get_thread_num())] = CPU_COUNT(&mine);
      if (omp_get_thread_num() == 0) team_size = omp_get_num_threads();
    }
    EXPECT_EQ(team_size, 2);
    EXPECT_EQ(omp_get_max_threads(), max_threads) << "the team start changed the default size";
    EXPECT_EQ(counts[0], CPU_COUNT(&before));
    EXPECT_EQ(counts[1], CPU_COUNT(&before)) << "the team's thread stayed pinned";
  }).join();
}

}  // namespace
}  // namespace epctx::exec
