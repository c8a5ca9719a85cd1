// ParallelFor / ParallelForRanges on the worker pool: every index runs exactly once, worker ids
// stay below the thread count, and concurrent and nested loops complete.
#include "exec/kernels/common/parallel_for.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace epctx::exec::kernels {
namespace {

void CheckOnce(int threads, int64_t count) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
  std::atomic<bool> bad_worker{false};
  ParallelFor(threads, count, [&](int64_t i, int worker) {
    hits[static_cast<size_t>(i)].fetch_add(1);
    if (worker < 0 || worker >= std::max(threads, 1)) bad_worker = true;
  });
  for (int64_t i = 0; i < count; ++i) {
    ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "index " << i << " of " << count;
  }
  EXPECT_FALSE(bad_worker.load());
}

TEST(ParallelForTest, EveryIndexOnceWithValidWorkers) {
  for (int threads : {0, 1, 2, 3, 8}) {
    for (int64_t count : {0, 1, 2, 7, 1000}) CheckOnce(threads, count);
  }
}

TEST(ParallelForTest, RangesCoverExactly) {
  for (int threads : {1, 2, 4}) {
    for (int64_t count : {1, 5, 64, 100003}) {
      for (int64_t grain : {1, 16, 1000000}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
        ParallelForRanges(threads, count, grain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
        });
        for (int64_t i = 0; i < count; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1);
      }
    }
  }
}

// More ranges than threads come in a multiple of the thread count, so no thread gets a larger
// share: 3 grains on 2 threads become 4 equal ranges, 9 on 4 become 12, 2 on 2 stay 2.
TEST(ParallelForTest, RangesSplitEvenlyOverThreads) {
  struct Case {
    int threads;
    int64_t count, grain, ranges;
  };
  for (const Case& c : {Case{2, 48, 16, 4}, Case{4, 144, 16, 12}, Case{2, 32, 16, 2},
                        Case{2, 3, 1, 3}, Case{3, 16 * 16, 16, 12}}) {
    std::mutex mutex;
    std::vector<int64_t> sizes;
    ParallelForRanges(c.threads, c.count, c.grain, [&](int64_t begin, int64_t end) {
      std::lock_guard<std::mutex> lock(mutex);
      sizes.push_back(end - begin);
    });
    EXPECT_EQ(static_cast<int64_t>(sizes.size()), c.ranges)
        << c.threads << " threads, " << c.count << " / grain " << c.grain;
    const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
    EXPECT_LE(*hi - *lo, 1);
  }
}

TEST(ParallelForTest, ConcurrentAndNestedCallersComplete) {
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 200; ++rep) {
        ParallelFor(2, 8, [&](int64_t, int) {
          ParallelFor(2, 4, [&](int64_t, int) { total.fetch_add(1); });
        });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(total.load(), 4 * 200 * 8 * 4);
}

}  // namespace
}  // namespace epctx::exec::kernels
