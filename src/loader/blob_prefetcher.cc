#include "loader/blob_prefetcher.h"

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <vector>

#include "loader/io_ring.h"
#include "util/aligned_buffer.h"
#include "util/logging.h"

namespace epctx::loader {
namespace {

constexpr unsigned kQueueDepth = 4;
constexpr uint64_t kAdviseChunk = uint64_t{1} << 20;  // per madvise operation
constexpr uint64_t kReadChunk = uint64_t{256} << 10;  // per read, into one scratch slot

enum class Method { kPopulate, kWillNeed, kRead };

const char* MethodName(Method m) {
  switch (m) {
    case Method::kPopulate:
      return "io_uring madvise(MADV_POPULATE_READ)";
    case Method::kWillNeed:
      return "io_uring madvise(MADV_WILLNEED)";
    case Method::kRead:
      return "io_uring read";
  }
  return "";
}

struct Chunk {
  uint64_t offset = 0;  // in the file (= in the mapping)
  uint64_t length = 0;
};

}  // namespace

BlobPrefetcher::BlobPrefetcher(std::span<const std::byte> mapping, uint64_t offset, uint64_t length,
                               int fd, std::string name)
    : mapping_(mapping.data()), offset_(offset), length_(length), fd_(fd), name_(std::move(name)) {
  if (offset_ > mapping.size()) offset_ = mapping.size();
  if (length_ > mapping.size() - offset_) length_ = mapping.size() - offset_;
  if (length_ == 0) {
    Finish(false);
    return;
  }
  thread_ = std::thread([this] { Run(); });
}

BlobPrefetcher::~BlobPrefetcher() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

BlobPrefetcher::Progress BlobPrefetcher::progress() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Progress p;
  p.bytes_total = length_;
  p.bytes_done = bytes_done_.load(std::memory_order_relaxed);
  p.finished = finished_;
  p.cancelled = cancelled_;
  p.method = method_;
  return p;
}

void BlobPrefetcher::WaitUntilFinished() const {
  std::unique_lock<std::mutex> lock(mutex_);
  finished_cv_.wait(lock, [this] { return finished_; });
}

void BlobPrefetcher::SetMethod(const char* method) {
  std::lock_guard<std::mutex> lock(mutex_);
  method_ = method;
}

void BlobPrefetcher::Finish(bool cancelled) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
    cancelled_ = cancelled;
  }
  finished_cv_.notify_all();
}

void BlobPrefetcher::RunWithoutRing(const std::string& why) {
  Logger().info("prefetch of '{}': io_uring unavailable ({}); using madvise(MADV_WILLNEED)", name_,
                why);
  SetMethod("madvise(MADV_WILLNEED)");
  // Starts readahead of the range and returns without waiting for it.
  if (::madvise(const_cast<std::byte*>(mapping_ + offset_), length_, MADV_WILLNEED) == 0) {
    bytes_done_.store(length_, std::memory_order_relaxed);
  }
  Finish(false);
}

void BlobPrefetcher::Run() {
  auto start = std::chrono::steady_clock::now();
  auto ring_or = IoRing::Create(kQueueDepth);
  if (!ring_or.ok()) {
    RunWithoutRing(ring_or.status().message());
    return;
  }
  IoRing ring = std::move(ring_or).value();
  Method method = Method::kPopulate;
  if (!ring.Supports(IORING_OP_MADVISE)) {
    if (!ring.Supports(IORING_OP_READ)) {
      RunWithoutRing("the kernel's io_uring has neither MADVISE nor READ");
      return;
    }
    method = Method::kRead;
  }
  SetMethod(MethodName(method));

  // Reads land in per-slot scratch memory that is overwritten and never looked at.
  AlignedBuffer scratch;
  std::array<Chunk, kQueueDepth> slots{};
  std::vector<unsigned> free_slots;
  for (unsigned i = 0; i < kQueueDepth; ++i) free_slots.push_back(kQueueDepth - 1 - i);
  std::deque<Chunk> retry;  // chunks to issue again with the next method
  uint64_t next = offset_;
  const uint64_t end = offset_ + length_;
  unsigned in_flight = 0;    // prepared and not yet completed
  unsigned unsubmitted = 0;  // prepared and not yet handed to the kernel
  bool failed = false;

  while (true) {
    while (!stop_.load(std::memory_order_relaxed) && !failed && !free_slots.empty() &&
           (!retry.empty() || next < end)) {
      Chunk chunk;
      if (!retry.empty()) {
        chunk = retry.front();
        retry.pop_front();
      } else {
        uint64_t size = method == Method::kRead ? kReadChunk : kAdviseChunk;
        chunk = {next, std::min(size, end - next)};
        next += chunk.length;
      }
      if (method == Method::kRead && !scratch.valid()) {
        scratch = AlignedBuffer(kQueueDepth * kReadChunk, AlignedBuffer::Fill::kUninitialized);
        if (!scratch.valid()) {
          failed = true;
          break;
        }
      }
      unsigned slot = free_slots.back();
      free_slots.pop_back();
      slots[slot] = chunk;
      io_uring_sqe* sqe = io_uring_get_sqe(ring.get());
      void* addr = const_cast<std::byte*>(mapping_ + chunk.offset);
      off_t len = static_cast<off_t>(chunk.length);
      if (method == Method::kPopulate) {
        io_uring_prep_madvise(sqe, addr, len, MADV_POPULATE_READ);
      } else if (method == Method::kWillNeed) {
        io_uring_prep_madvise(sqe, addr, len, MADV_WILLNEED);
      } else {
        io_uring_prep_read(sqe, fd_, scratch.data() + slot * kReadChunk,
                           static_cast<unsigned>(chunk.length), chunk.offset);
      }
      io_uring_sqe_set_data64(sqe, slot);
      ++in_flight;
      ++unsubmitted;
    }
    if (in_flight == 0) break;
    int submitted = io_uring_submit(ring.get());
    if (submitted >= 0) {
      unsubmitted -= std::min(unsubmitted, static_cast<unsigned>(submitted));
    } else if (submitted == -EINTR || submitted == -EAGAIN) {
      if (in_flight == unsubmitted) continue;  // nothing in the kernel to wait for: submit again
    } else {
      // The entries not handed over never run; wait only for those that were.
      Logger().debug("prefetch of '{}': io_uring_submit failed: {}", name_,
                     std::strerror(-submitted));
      failed = true;
      in_flight -= unsubmitted;
      unsubmitted = 0;
      if (in_flight == 0) break;
    }
    io_uring_cqe* cqe = nullptr;
    int ret = io_uring_wait_cqe(ring.get(), &cqe);
    if (ret == -EINTR) continue;
    if (ret < 0) {
      // Operations may still be running in the kernel and write into `scratch`: leave it
      // allocated rather than risk a write into freed memory; the ring's teardown cancels them.
      Logger().warn("prefetch of '{}': waiting for io_uring failed: {}", name_,
                    std::strerror(-ret));
      static_cast<void>(new AlignedBuffer(std::move(scratch)));  // deliberately leaked
      Finish(true);
      return;
    }
    unsigned slot = static_cast<unsigned>(io_uring_cqe_get_data64(cqe));
    int res = cqe->res;
    io_uring_cqe_seen(ring.get(), cqe);
    --in_flight;
    Chunk chunk = slots[slot];
    free_slots.push_back(slot);
    if (res == -EINVAL && method == Method::kPopulate) {
      // MADV_POPULATE_READ is Linux 5.14+; readahead advice is older.
      Logger().debug("prefetch of '{}': MADV_POPULATE_READ refused; using MADV_WILLNEED", name_);
      method = Method::kWillNeed;
      SetMethod(MethodName(method));
      retry.push_back(chunk);
      continue;
    }
    if (res == -EINTR || res == -EAGAIN) {
      retry.push_back(chunk);
      continue;
    }
    if (res < 0) {
      Logger().debug("prefetch of '{}': {} at offset {} failed: {}; stopping", name_,
                     MethodName(method), chunk.offset, std::strerror(-res));
      failed = true;
      continue;
    }
    bytes_done_.fetch_add(chunk.length, std::memory_order_relaxed);
  }
  bool cancelled = stop_.load(std::memory_order_relaxed) &&
                   bytes_done_.load(std::memory_order_relaxed) < length_;
  Logger().debug(
      "prefetch of '{}': {} of {} bytes via {} in {:.1f} ms{}", name_,
      bytes_done_.load(std::memory_order_relaxed), length_, MethodName(method),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
      cancelled ? " (cancelled)" : "");
  Finish(cancelled);
}

}  // namespace epctx::loader
