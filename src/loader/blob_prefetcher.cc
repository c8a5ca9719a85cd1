#include "loader/blob_prefetcher.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "loader/io_ring.h"
#include "loader/uring_chunks.h"
#include "util/aligned_buffer.h"
#include "util/logging.h"

namespace epctx::loader {
namespace {

constexpr unsigned kPrefetchQueueDepth = 4;
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
  auto ring_or = IoRing::Create(kPrefetchQueueDepth);
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
  if (method == Method::kRead) {
    scratch = AlignedBuffer(kPrefetchQueueDepth * kReadChunk, AlignedBuffer::Fill::kUninitialized);
    if (!scratch.valid()) {
      RunWithoutRing("no memory for read scratch buffers");
      return;
    }
  }
  ChunkCallbacks callbacks;
  callbacks.prepare = [&](io_uring_sqe* sqe, const IoChunk& chunk, unsigned slot) {
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
  };
  callbacks.complete = [&](const IoChunk& chunk, int res) -> ChunkResult {
    if (res == -EINVAL && method == Method::kPopulate) {
      // MADV_POPULATE_READ is Linux 5.14+; readahead advice is older.
      Logger().debug("prefetch of '{}': MADV_POPULATE_READ refused; using MADV_WILLNEED", name_);
      method = Method::kWillNeed;
      SetMethod(MethodName(method));
      return {ChunkOutcome::kRetry, chunk};
    }
    if (res == -EINTR || res == -EAGAIN) return {ChunkOutcome::kRetry, chunk};
    if (res < 0) {
      Logger().debug("prefetch of '{}': {} at offset {} failed: {}; stopping", name_,
                     MethodName(method), chunk.offset, std::strerror(-res));
      return {ChunkOutcome::kStop, {}};
    }
    bytes_done_.fetch_add(chunk.length, std::memory_order_relaxed);
    return {ChunkOutcome::kDone, {}};
  };
  callbacks.cancelled = [this] { return stop_.load(std::memory_order_relaxed); };
  ChunkRunResult run =
      RunChunks(ring, kPrefetchQueueDepth, offset_, offset_ + length_,
                method == Method::kRead ? kReadChunk : kAdviseChunk, callbacks, name_);
  if (run.abandoned_in_flight) {
    // Reads may still land in `scratch`: leave it allocated rather than risk a write into freed
    // memory; the ring's teardown cancels them.
    Logger().warn("prefetch of '{}': {}", name_, run.status.message());
    static_cast<void>(new AlignedBuffer(std::move(scratch)));  // deliberately leaked
    Finish(true);
    return;
  }
  if (!run.status.ok()) Logger().debug("prefetch of '{}': {}", name_, run.status.message());
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
