// The io_uring loop shared by the prefetcher and the file reader: a byte range cut into chunks,
// at most `depth` operations in flight, each completion handed back to the caller to decide
// whether the chunk is done, must be issued again (a remainder, or with another method) or
// whether to stop.
#pragma once

#include <liburing.h>

#include <cstdint>
#include <functional>

#include "epctx/status.h"
#include "loader/io_ring.h"

namespace epctx::loader {

struct IoChunk {
  uint64_t offset = 0;
  uint64_t length = 0;
};

enum class ChunkOutcome {
  kDone,   // the chunk is finished
  kRetry,  // issue `retry` (the same chunk or what is left of it) again
  kStop,   // issue nothing more; chunks in flight are waited for and not reported
};

struct ChunkResult {
  ChunkOutcome outcome = ChunkOutcome::kDone;
  IoChunk retry;
};

struct ChunkCallbacks {
  // Fills `sqe` for `chunk`. `slot` (below depth) belongs to the chunk until its completion, so
  // it can index per-operation memory.
  std::function<void(io_uring_sqe* sqe, const IoChunk& chunk, unsigned slot)> prepare;
  // `res` is the operation's result (bytes, or -errno).
  std::function<ChunkResult(const IoChunk& chunk, int res)> complete;
  // Polled before each new chunk; true stops issuing (as kStop). May be empty.
  std::function<bool()> cancelled;
};

struct ChunkRunResult {
  Status status;  // kIoError when submitting to or waiting on the ring failed
  // Waiting on the ring failed with operations still in the kernel: memory they write into
  // must stay allocated (the ring's teardown cancels them).
  bool abandoned_in_flight = false;
};

// Runs [begin, end) in chunks of at most `chunk_size` bytes. `depth` must not exceed the ring's
// entries. `name` is for messages.
ChunkRunResult RunChunks(IoRing& ring, unsigned depth, uint64_t begin, uint64_t end,
                         uint64_t chunk_size, const ChunkCallbacks& callbacks,
                         const std::string& name);

}  // namespace epctx::loader
