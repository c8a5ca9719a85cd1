#include "loader/uring_file_reader.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "loader/io_ring.h"
#include "loader/uring_chunks.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace epctx::loader {
namespace {

constexpr unsigned kReadQueueDepth = 8;
constexpr uint64_t kChunk = uint64_t{1} << 20;

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
  auto ring_or = IoRing::Create(kReadQueueDepth);
  if (!ring_or.ok()) {
    Logger().info("'{}': io_uring unavailable ({}); reading with pread", name,
                  ring_or.status().message());
    return ReadWithPread(fd, length, dst, direct, name);
  }
  IoRing ring = std::move(ring_or).value();
  Status error;
  ChunkCallbacks callbacks;
  callbacks.prepare = [&](io_uring_sqe* sqe, const IoChunk& read, unsigned) {
    io_uring_prep_read(sqe, fd, dst.data() + read.offset, static_cast<unsigned>(read.length),
                       read.offset);
  };
  callbacks.complete = [&](const IoChunk& read, int res) -> ChunkResult {
    if (res == -EINTR || res == -EAGAIN) return {ChunkOutcome::kRetry, read};
    if (res < 0) {
      error = EPCTX_ERROR(kIoError, "'{}': read of {} bytes at offset {} failed: {}", name,
                          read.length, read.offset, std::strerror(-res));
      return {ChunkOutcome::kStop, {}};
    }
    uint64_t got = static_cast<uint64_t>(res);
    uint64_t end = read.offset + got;
    if (got < read.length && end < length) {
      if (got == 0) {
        error = EPCTX_ERROR(kIoError, "'{}': file ended at {} bytes, {} expected", name,
                            read.offset, length);
        return {ChunkOutcome::kStop, {}};
      }
      return {ChunkOutcome::kRetry, {end, read.length - got}};  // a short read: the rest
    }
    return {ChunkOutcome::kDone, {}};
  };
  // Reads may still be landing in `dst` when the ring breaks (wait_cqe fails only on a broken
  // ring); the caller must then not reuse it, and the error says so by being returned.
  ChunkRunResult run = RunChunks(ring, kReadQueueDepth, 0, room, kChunk, callbacks, name);
  if (!run.status.ok()) return run.status;
  return error;
}

}  // namespace epctx::loader
