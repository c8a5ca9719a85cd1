// Memory for the run values the planned arena cannot hold (shapes known only at run time, as in
// a transformer with a symbolic sequence length), kept from one run to the next. Without it each
// run allocated them anew from the C heap, which hands large blocks back to the kernel between
// runs: BERT-base at sequence 128 took about 2000 page faults per run, zero-filling the same
// 8 MiB every time.
//
// A free buffer no run took for two whole runs is freed when the next one ends (EndRun): the
// values whose shapes grow from run to run (a decode loop's key and value caches, a size class
// further every ~20 tokens) would otherwise leave every class they outgrew in the pool, up to its
// limit (the SmolLM-shaped int4 pair's private memory grew ~1 MB a token, to 196 MB after 128).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx::exec {

class ValueBufferPool : public std::enable_shared_from_this<ValueBufferPool> {
 public:
  // Buffers below this size come from the C heap directly: its bins serve them without faults.
  static constexpr uint64_t kMinPooledBytes = 64 * 1024;

  // Keeps at most `max_retained_bytes` of free buffers; a buffer released beyond that is freed.
  static std::shared_ptr<ValueBufferPool> Create(uint64_t max_retained_bytes);

  ~ValueBufferPool();
  ValueBufferPool(const ValueBufferPool&) = delete;
  ValueBufferPool& operator=(const ValueBufferPool&) = delete;

  // A tensor of `type` and `shape` (contents undefined), as Tensor::Allocate makes, in a free
  // buffer of its size class when there is one. The tensor may outlive the pool.
  Result<Tensor> Allocate(DataType type, std::vector<int64_t> shape);

  // Marks the end of a run of the program the pool serves: frees the buffers that stayed free
  // through the two runs before this one.
  void EndRun();

  // Bytes of free buffers held now.
  uint64_t retained_bytes() const;

  // The size class of a `bytes`-byte buffer: the next of 8 steps per power of two (at most 1/8
  // more than asked), so that a length that changes a little between runs reuses its buffer.
  static uint64_t SizeClass(uint64_t bytes);

 private:
  explicit ValueBufferPool(uint64_t max_retained_bytes) : max_retained_(max_retained_bytes) {}
  // A new buffer of `size_class` bytes (nullptr when out of memory), freed with std::free.
  static void* AllocateBuffer(uint64_t size_class);
  void Release(void* buffer, uint64_t bytes);

  // Whole runs a free buffer may stay untaken before EndRun frees it.
  static constexpr uint64_t kIdleRuns = 2;

  struct FreeBuffer {
    void* buffer;
    uint64_t released_at;  // runs_ when it was released
  };

  const uint64_t max_retained_;
  mutable std::mutex mutex_;
  std::multimap<uint64_t, FreeBuffer> free_;  // by size class
  uint64_t retained_ = 0;
  uint64_t runs_ = 0;  // EndRun calls so far
};

}  // namespace epctx::exec
