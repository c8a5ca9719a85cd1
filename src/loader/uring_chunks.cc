#include "loader/uring_chunks.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <vector>

#include "util/status_macros.h"

namespace epctx::loader {

ChunkRunResult RunChunks(IoRing& ring, unsigned depth, uint64_t begin, uint64_t end,
                         uint64_t chunk_size, const ChunkCallbacks& callbacks,
                         const std::string& name) {
  ChunkRunResult result;
  std::vector<IoChunk> slots(depth);
  std::vector<unsigned> free_slots;
  for (unsigned i = 0; i < depth; ++i) free_slots.push_back(depth - 1 - i);
  std::deque<IoChunk> retry;
  uint64_t next = begin;
  unsigned in_flight = 0;    // prepared and not yet completed
  unsigned unsubmitted = 0;  // prepared and not yet handed to the kernel
  bool stopped = false;

  while (true) {
    while (!stopped && !free_slots.empty() && (!retry.empty() || next < end)) {
      if (callbacks.cancelled && callbacks.cancelled()) {
        stopped = true;
        break;
      }
      IoChunk chunk;
      if (!retry.empty()) {
        chunk = retry.front();
        retry.pop_front();
      } else {
        chunk = {next, std::min(chunk_size, end - next)};
        next += chunk.length;
      }
      unsigned slot = free_slots.back();
      free_slots.pop_back();
      slots[slot] = chunk;
      io_uring_sqe* sqe = io_uring_get_sqe(ring.get());
      callbacks.prepare(sqe, chunk, slot);
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
      if (result.status.ok()) {
        result.status = EPCTX_ERROR(kIoError, "'{}': io_uring_submit failed: {}", name,
                                    std::strerror(-submitted));
      }
      stopped = true;
      in_flight -= unsubmitted;
      unsubmitted = 0;
      if (in_flight == 0) break;
    }
    io_uring_cqe* cqe = nullptr;
    int ret = io_uring_wait_cqe(ring.get(), &cqe);
    if (ret == -EINTR) continue;
    if (ret < 0) {
      result.status =
          EPCTX_ERROR(kIoError, "'{}': waiting for io_uring failed: {}", name, std::strerror(-ret));
      result.abandoned_in_flight = true;
      return result;
    }
    unsigned slot = static_cast<unsigned>(io_uring_cqe_get_data64(cqe));
    int res = cqe->res;
    io_uring_cqe_seen(ring.get(), cqe);
    --in_flight;
    IoChunk chunk = slots[slot];
    free_slots.push_back(slot);
    if (stopped) continue;  // draining
    ChunkResult r = callbacks.complete(chunk, res);
    if (r.outcome == ChunkOutcome::kRetry) retry.push_back(r.retry);
    if (r.outcome == ChunkOutcome::kStop) stopped = true;
  }
  return result;
}

}  // namespace epctx::loader
