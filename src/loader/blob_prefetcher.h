// Background prefetch of a range of a mapped file (epctx.load_mode=prefetch): a thread that owns
// an io_uring ring issues the range in order, a few chunks in flight, so the I/O overlaps session
// set-up and the first inference, which never waits for the prefetch itself (only, through the
// page cache, for a page that is being read anyway).
//
// Per chunk, the first of these the kernel accepts:
//   IORING_OP_MADVISE(MADV_POPULATE_READ)  reads the pages and maps them into this process
//   IORING_OP_MADVISE(MADV_WILLNEED)       starts readahead into the page cache
//   IORING_OP_READ into a small reusable buffer (pulls the pages into the page cache)
// Without io_uring, a plain madvise(MADV_WILLNEED) on the range, with the reason logged.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <thread>

namespace epctx::loader {

class BlobPrefetcher {
 public:
  struct Progress {
    uint64_t bytes_total = 0;
    uint64_t bytes_done = 0;  // bytes whose prefetch operation completed
    bool finished = false;    // the thread stopped: range done, cancelled, or failed
    bool cancelled = false;   // stopped by the destructor before the end of the range
    std::string method;       // how the last chunk was prefetched
  };

  // Starts prefetching bytes [offset, offset + length) of `mapping`, the whole-file mapping of the
  // open file `fd`. `mapping` and `fd` must outlive this object. `name` is for log messages.
  BlobPrefetcher(std::span<const std::byte> mapping, uint64_t offset, uint64_t length, int fd,
                 std::string name);
  // Stops issuing new chunks, waits for those in flight (a few MiB at most), joins the thread.
  ~BlobPrefetcher();
  BlobPrefetcher(const BlobPrefetcher&) = delete;
  BlobPrefetcher& operator=(const BlobPrefetcher&) = delete;

  Progress progress() const;
  void WaitUntilFinished() const;

 private:
  void Run();
  void RunWithoutRing(const std::string& why);
  void SetMethod(const char* method);
  void Finish(bool cancelled);

  const std::byte* mapping_;
  uint64_t offset_;
  uint64_t length_;
  int fd_;
  std::string name_;

  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> bytes_done_{0};
  mutable std::mutex mutex_;
  mutable std::condition_variable finished_cv_;
  bool finished_ = false;
  bool cancelled_ = false;
  std::string method_;
  std::thread thread_;  // last: started once every other member exists
};

}  // namespace epctx::loader
