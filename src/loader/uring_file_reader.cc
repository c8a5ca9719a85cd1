#include "loader/uring_file_reader.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <deque>
#include <vector>

#include "loader/io_ring.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace epctx::loader {
namespace {

constexpr unsigned kQueueDepth = 8;
constexpr uint64_t kChunk = uint64_t{1} << 20;

struct Read {
  uint64_t offset = 0;  // file offset = offset in dst
  uint64_t length = 0;  // bytes asked for (block-rounded with O_DIRECT)
};

Status ReadWithPread(int fd, uint64_t length, std::span<std::byte> dst, bool direct,
                     const std::string& name) {
  uint64_t done = 0;
  while (done < length) {
    uint64_t want = std::min(kChunk, length - done);
    if (direct) want = (want + kDirectIoAlignment - 1) / kDirectIoAlignment * kDirectIoAlignment;
    ssize_t n = ::pread(fd, dst.data() + done, want, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return EPCTX_ERROR(kIoError, "'{}': read at offset {} failed: {}", name, done,
                         std::strerror(errno));
    }
    if (n == 0) {
      return EPCTX_ERROR(kIoError, "'{}': file ended at {} bytes, {} expected", name, done, length);
    }
    done += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Status ReadFileWithUring(int fd, uint64_t length, std::span<std::byte> dst, bool direct,
                         const std::string& name) {
  uint64_t room =
      direct ? (length + kDirectIoAlignment - 1) / kDirectIoAlignment * kDirectIoAlignment : length;
  if (dst.size() < room) {
    return EPCTX_ERROR(kInternal, "'{}': {} bytes of buffer for {} bytes of reads", name,
                       dst.size(), room);
  }
  auto ring_or = IoRing::Create(kQueueDepth);
  if (!ring_or.ok()) {
    Logger().info("'{}': io_uring unavailable ({}); reading with pread", name,
                  ring_or.status().message());
    return ReadWithPread(fd, length, dst, direct, name);
  }
  IoRing ring = std::move(ring_or).value();

  std::array<Read, kQueueDepth> slots{};
  std::vector<unsigned> free_slots;
  for (unsigned i = 0; i < kQueueDepth; ++i) free_slots.push_back(i);
  std::deque<Read> pending;  // remainders of short reads
  uint64_t next = 0;
  unsigned in_flight = 0;    // prepared and not yet completed
  unsigned unsubmitted = 0;  // prepared and not yet handed to the kernel
  Status error;

  while (true) {
    while (error.ok() && !free_slots.empty() && (!pending.empty() || next < length)) {
      Read read;
      if (!pending.empty()) {
        read = pending.front();
        pending.pop_front();
      } else {
        read.offset = next;
        read.length = std::min(kChunk, room - next);
        next += read.length;
      }
      unsigned slot = free_slots.back();
      free_slots.pop_back();
      slots[slot] = read;
      io_uring_sqe* sqe = io_uring_get_sqe(ring.get());
      io_uring_prep_read(sqe, fd, dst.data() + read.offset, static_cast<unsigned>(read.length),
                         read.offset);
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
      if (error.ok()) {
        error = EPCTX_ERROR(kIoError, "'{}': io_uring_submit failed: {}", name,
                            std::strerror(-submitted));
      }
      in_flight -= unsubmitted;
      unsubmitted = 0;
      if (in_flight == 0) break;
    }
    io_uring_cqe* cqe = nullptr;
    int ret = io_uring_wait_cqe(ring.get(), &cqe);
    if (ret == -EINTR) continue;
    if (ret < 0) {
      // Reads may still be landing in `dst`; the caller must not reuse it. Not expected to happen:
      // wait_cqe fails only on a broken ring.
      return EPCTX_ERROR(kIoError, "'{}': waiting for io_uring failed: {}", name,
                         std::strerror(-ret));
    }
    unsigned slot = static_cast<unsigned>(io_uring_cqe_get_data64(cqe));
    int res = cqe->res;
    io_uring_cqe_seen(ring.get(), cqe);
    --in_flight;
    Read read = slots[slot];
    free_slots.push_back(slot);
    if (!error.ok()) continue;  // draining
    if (res == -EINTR || res == -EAGAIN) {
      pending.push_back(read);
      continue;
    }
    if (res < 0) {
      error = EPCTX_ERROR(kIoError, "'{}': read of {} bytes at offset {} failed: {}", name,
                          read.length, read.offset, std::strerror(-res));
      continue;
    }
    uint64_t got = static_cast<uint64_t>(res);
    uint64_t end = read.offset + got;
    if (got < read.length && end < length) {
      if (got == 0) {
        error = EPCTX_ERROR(kIoError, "'{}': file ended at {} bytes, {} expected", name,
                            read.offset, length);
        continue;
      }
      pending.push_back({end, read.length - got});
    }
  }
  return error;
}

}  // namespace epctx::loader
