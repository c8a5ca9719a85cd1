// Per-thread oneDNN scratchpads: large enough, reused while large enough, in small pages even
// when large (runtime.cc says why), from the first as large as the largest
// scratchpad of the primitives made so far, private to each thread, and, when mapped ahead by a
// preparation thread or left by a thread that ended, adopted already faulted in by the next thread
// that needs one.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "exec/kernels/onednn/runtime.h"
#include "vm_flags.h"

namespace epctx::exec::kernels::onednn {
namespace {

uintptr_t Address(void* p) {
  return reinterpret_cast<uintptr_t>(p);
}

// Pages of [p, p + bytes) resident in memory.
size_t ResidentPages(void* p, size_t bytes) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in_core((bytes + page - 1) / page);
  if (::mincore(p, bytes, in_core.data()) != 0) return 0;
  size_t n = 0;
  for (unsigned char c : in_core) n += c & 1;
  return n;
}

// ThreadScratchpad(bytes) on a new thread, and how many of the buffer's first `bytes` bytes'
// pages were resident before the thread wrote anything.
std::pair<void*, size_t> NewThreadsScratchpad(size_t bytes) {
  std::pair<void*, size_t> seen{nullptr, 0};
  std::thread([&] {
    auto r = ThreadScratchpad(bytes);
    if (!r.ok()) return;
    seen = {*r, ResidentPages(*r, bytes)};
  }).join();
  return seen;
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
  EXPECT_EQ(Address(*large) % 64, 0u);
  const std::string flags = testing::VmFlagsOf(*large);
  ASSERT_NE(flags, "");
  EXPECT_EQ(flags.find(" hg"), std::string::npos) << flags;
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

TEST(ThreadScratchpad, AMappedAheadBufferIsAdoptedByTheNextThreadOnly) {
  // Tests run before this one in the same process (exec_tests run whole, not one test per
  // process as CTest runs it) may have noted scratchpads, left a spare or given a thread a large
  // buffer. A new thread's first buffer is as large as the largest known (a spare that large
  // is adopted, and given back when the thread ends); then some thread has held one as large,
  // and no spare is made.
  std::atomic<bool> stop{false};
  NewThreadsScratchpad(4096);
  const size_t spare = SpareScratchpadBytes();
  MapScratchpadAhead(stop);
  EXPECT_EQ(SpareScratchpadBytes(), spare);

  // Larger than any buffer a thread holds, so that the next thread needs a new one.
  const size_t kBytes =
      std::max(size_t{24} << 20, LargestThreadScratchpadBytes() + (size_t{2} << 20));
  const size_t pages = kBytes / static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  NoteScratchpadSize(kBytes);
  MapScratchpadAhead(stop);
  // The first new thread takes the buffer mapped ahead; while it holds it, another thread gets
  // a new one.
  void* adopted = nullptr;
  size_t resident = 0;
  std::pair<void*, size_t> other{nullptr, 0};
  std::thread([&] {
    auto r = ThreadScratchpad(kBytes);
    if (!r.ok()) return;
    adopted = *r;
    resident = ResidentPages(*r, kBytes);
    other = NewThreadsScratchpad(kBytes);
    // Some thread holds a buffer as large as the largest scratchpad now: no spare is made.
    MapScratchpadAhead(stop);
    EXPECT_EQ(SpareScratchpadBytes(), kBytes) << "the other thread's, given back as it ended";
  }).join();
  ASSERT_NE(adopted, nullptr);
  EXPECT_EQ(resident, pages) << "the first new thread takes the buffer mapped ahead";
  ASSERT_NE(other.first, nullptr);
  EXPECT_NE(other.first, adopted) << "which only one thread can have";
  EXPECT_EQ(other.second, 0u);
}

TEST(ThreadScratchpad, AnEndingThreadsBufferIsAdoptedByTheNextNewThread) {
  const size_t kBytes =
      std::max(size_t{20} << 20, LargestThreadScratchpadBytes() + (size_t{2} << 20));
  const size_t pages = kBytes / static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  void* theirs = nullptr;
  std::thread([&] {
    auto r = ThreadScratchpad(kBytes);
    if (!r.ok()) return;
    theirs = *r;
    std::memset(theirs, 5, kBytes);  // a run's primitives wrote all of it
  }).join();
  ASSERT_NE(theirs, nullptr);
  EXPECT_GE(SpareScratchpadBytes(), kBytes);
  auto [next, resident] = NewThreadsScratchpad(kBytes);
  EXPECT_EQ(next, theirs) << "the next thread takes the ended thread's buffer";
  EXPECT_EQ(resident, pages) << "with its pages faulted in already";
}

}  // namespace
}  // namespace epctx::exec::kernels::onednn
