// Per-thread oneDNN scratchpads: large enough, reused while large enough, in 2 MiB pages once
// large (so a first run faults a few huge pages), from the first as large as the largest
// scratchpad of the primitives made so far, and private to each thread.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>

#include "exec/kernels/dnnl/runtime.h"

namespace epctx::exec::kernels::onednn {
namespace {

uintptr_t Address(void* p) {
  return reinterpret_cast<uintptr_t>(p);
}

TEST(ThreadScratchpad, GrowsOnDemandAndIsReusedWhileLargeEnough) {
  auto small = ThreadScratchpad(1000);
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_EQ(Address(*small) % 64, 0u);
  std::memset(*small, 1, 1000);
  auto again = ThreadScratchpad(4000);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *small) << "a page is large enough: no new memory";

  constexpr size_t kLarge = size_t{10} << 20;  // a Winograd convolution's scratchpad
  auto large = ThreadScratchpad(kLarge);
  ASSERT_TRUE(large.ok()) << large.status().ToString();
  EXPECT_EQ(Address(*large) % (size_t{2} << 20), 0u) << "large scratchpads start on a huge page";
  std::memset(*large, 2, kLarge);  // all of it is writable
  auto smaller = ThreadScratchpad(5000);
  ASSERT_TRUE(smaller.ok());
  EXPECT_EQ(*smaller, *large) << "the large buffer serves smaller requests";
}

TEST(ThreadScratchpad, AThreadsFirstBufferHoldsTheLargestKnownScratchpad) {
  NoteScratchpadSize(size_t{3} << 20);
  NoteScratchpadSize(size_t{1} << 20);  // smaller: changes nothing
  void* first = nullptr;
  void* larger = nullptr;
  std::thread([&] {
    auto a = ThreadScratchpad(1000);
    auto b = ThreadScratchpad(size_t{3} << 20);
    if (!a.ok() || !b.ok()) return;
    first = *a;
    larger = *b;
    std::memset(larger, 3, size_t{3} << 20);  // all of it is writable
  }).join();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(larger, first) << "the first buffer already held the largest known scratchpad";
  EXPECT_EQ(Address(first) % (size_t{2} << 20), 0u) << "and came in huge pages, being large";
}

TEST(ThreadScratchpad, EachThreadHasItsOwn) {
  auto mine = ThreadScratchpad(size_t{3} << 20);
  ASSERT_TRUE(mine.ok());
  void* theirs = nullptr;
  std::thread([&] {
    auto r = ThreadScratchpad(size_t{3} << 20);
    if (r.ok()) theirs = *r;
  }).join();
  ASSERT_NE(theirs, nullptr);
  EXPECT_NE(theirs, *mine);
}

}  // namespace
}  // namespace epctx::exec::kernels::onednn
