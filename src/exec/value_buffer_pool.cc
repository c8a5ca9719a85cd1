#include "exec/value_buffer_pool.h"

#include <bit>
#include <cstdlib>
#include <limits>
#include <vector>

#include "util/overflow.h"

namespace epctx::exec {

std::shared_ptr<ValueBufferPool> ValueBufferPool::Create(uint64_t max_retained_bytes) {
  return std::shared_ptr<ValueBufferPool>(new ValueBufferPool(max_retained_bytes));
}

ValueBufferPool::~ValueBufferPool() {
  for (auto& [bytes, free] : free_) std::free(free.buffer);
}

void* ValueBufferPool::AllocateBuffer(uint64_t size_class) {
  // Small pages, even for a 25 MB output: a first run faults them in as it writes, and on the
  // 2-vCPU VMs this project measures on, 4 KiB pages come from memory the guest freed lately,
  // which the host still backs, while a 2 MiB page is a whole free block, which the guest has
  // often reported free to the host, so that each of its 512 small pages faults in the host
  // too. GPT-2's logits (128 x 50257 floats) at 1 thread, first run against steady, 5
  // alternating processes on a Zen 4: lm_head +11 to +13 ms with small pages, +7 to +61 (median
  // 37) advised huge; the SmolLM-shaped prefill's: +10 to +11 against +5 to +49. Steady runs
  // are the same either way.
  return std::aligned_alloc(64, static_cast<size_t>(size_class));
}

uint64_t ValueBufferPool::SizeClass(uint64_t bytes) {
  if (bytes <= 64) return 64;
  const int top = std::bit_width(bytes - 1) - 1;  // highest set bit of bytes - 1
  const uint64_t step = top >= 3 ? uint64_t{1} << (top - 3) : 1;
  return (bytes + step - 1) / step * step;
}

Result<Tensor> ValueBufferPool::Allocate(DataType type, std::vector<int64_t> shape) {
  const size_t elem = DataTypeSize(type);
  if (type == DataType::kString || elem == 0) return Tensor::Allocate(type, std::move(shape));
  uint64_t bytes = 0;
  // A bad shape: Tensor::Allocate reports it.
  if (!CheckedByteSize(shape, elem, &bytes) || bytes < kMinPooledBytes ||
      bytes > (std::numeric_limits<uint64_t>::max() >> 2)) {
    return Tensor::Allocate(type, std::move(shape));
  }
  const uint64_t size_class = SizeClass(bytes);
  void* buffer = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(size_class);
    if (it != free_.end()) {
      buffer = it->second.buffer;
      retained_ -= size_class;
      free_.erase(it);
    }
  }
  if (buffer == nullptr) {
    buffer = AllocateBuffer(size_class);
    if (buffer == nullptr) {
      return EPCTX_ERROR(kInternal, "out of memory allocating {} bytes", size_class);
    }
  }
  // The buffer goes back to the pool when the last tensor sharing it goes, or to the C heap
  // when the pool is gone by then.
  std::weak_ptr<ValueBufferPool> pool = weak_from_this();
  std::shared_ptr<const void> owner(buffer, [pool, size_class](const void* p) {
    void* q = const_cast<void*>(p);
    if (std::shared_ptr<ValueBufferPool> alive = pool.lock()) {
      alive->Release(q, size_class);
    } else {
      std::free(q);
    }
  });
  return Tensor::View(type, std::move(shape), buffer, std::move(owner));
}

void ValueBufferPool::Release(void* buffer, uint64_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (retained_ + bytes <= max_retained_) {
      free_.emplace(bytes, FreeBuffer{buffer, runs_});
      retained_ += bytes;
      return;
    }
  }
  std::free(buffer);
}

void ValueBufferPool::EndRun() {
  std::vector<void*> idle;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++runs_;
    for (auto it = free_.begin(); it != free_.end();) {
      if (it->second.released_at + kIdleRuns < runs_) {
        idle.push_back(it->second.buffer);
        retained_ -= it->first;
        it = free_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (void* buffer : idle) std::free(buffer);
}

uint64_t ValueBufferPool::retained_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return retained_;
}

}  // namespace epctx::exec
