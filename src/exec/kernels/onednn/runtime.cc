#include "exec/kernels/onednn/runtime.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

#include "util/anonymous_memory.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {

const dnnl::engine& CpuEngine() {
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

void InitializeRuntime() {
  (void)CpuEngine();
  (void)dnnl::get_primitive_cache_capacity();
  (void)dnnl::get_effective_cpu_isa();
}

dnnl::stream& ThreadStream() {
  thread_local dnnl::stream stream(CpuEngine());
  return stream;
}

ThreadBudget::ThreadBudget(int threads) : previous_(omp_get_max_threads()) {
  omp_set_num_threads(std::max(threads, 1));
}

ThreadBudget::~ThreadBudget() {
  omp_set_num_threads(previous_);
}

void WarmUpGemm() {
  static std::once_flag once;
  std::call_once(once, [] {
    constexpr int kSide = 64;
    const std::vector<float> a(kSide * kSide, 0.f), b(kSide * kSide, 0.f);
    std::vector<float> c(kSide * kSide);
    ThreadBudget budget(1);
    (void)dnnl_sgemm('N', 'N', kSide, kSide, kSide, 1.f, a.data(), kSide, b.data(), kSide, 0.f,
                     c.data(), kSide);
  });
}

Status FromDnnlError(const dnnl::error& e, std::string_view what) {
  if (e.status == dnnl_unimplemented) {
    return EPCTX_ERROR(kUnsupported, "oneDNN has no implementation for {}: {}", what, e.what());
  }
  return EPCTX_ERROR(kInternal, "oneDNN failed on {}: {} (status {})", what, e.what(),
                     static_cast<int>(e.status));
}

namespace {

std::atomic<size_t> largest_scratchpad{0};
// The largest scratchpad any thread holds: once one is as large as every known primitive's, a
// spare would only be adopted by another thread, if ever.
std::atomic<size_t> largest_thread_buffer{0};

// A buffer mapped ahead (MapScratchpadAhead) for the next thread that needs a larger one; empty
// (capacity 0) when there is none. Guarded by spare_mutex. Never destroyed: threads that are
// still running while the process exits may still take it or swap it.
std::mutex spare_mutex;
// A thread is in MapScratchpadAhead.
std::atomic<bool> making_spare{false};
AnonymousMemory& Spare() {
  static AnonymousMemory* spare = new AnonymousMemory();
  return *spare;
}

Result<AnonymousMemory> AllocateScratchpad(size_t bytes) {
  // Small pages, even for a Winograd convolution's scratchpad of 10 MiB and more. In 2 MiB pages a
  // first run (or the thread mapping the buffer ahead of it) faulted a few huge pages instead of
  // thousands of small ones, 0.3 against 4.4 ms on an earlier host; but on the Firecracker VMs this
  // project runs on, a huge page's first touch is bimodal (a whole free block the guest has
  // often reported free to the host faults its 512 small pages in the host too:
  // exec/value_buffer_pool.cc), and it landed on first runs. Zen 4, 1 thread, alternating
  // processes, creation + first inference: ResNet-50 87 (64-112) -> 73 (71-76) ms, DenseNet-121
  // 57 (40-64) -> 44 (40-47); 2 threads within noise; steady runs unchanged.
  auto memory = AnonymousMemory::Allocate(bytes, static_cast<size_t>(::sysconf(_SC_PAGESIZE)),
                                          /*huge_pages=*/false);
  if (!memory.ok()) {
    return EPCTX_ERROR(kFailedPrecondition, "cannot allocate a {}-byte oneDNN scratchpad: {}",
                       bytes, memory.status().message());
  }
  return memory;
}

// The size of spare scratchpad to make: the largest known, unless no primitive needs one, some
// thread's buffer is already as large, or the spare is.
size_t SpareNeeded() {
  const size_t bytes = largest_scratchpad.load(std::memory_order_relaxed);
  if (bytes == 0 || largest_thread_buffer.load(std::memory_order_relaxed) >= bytes) return 0;
  std::lock_guard<std::mutex> lock(spare_mutex);
  return Spare().capacity() >= bytes ? 0 : bytes;
}

// Makes `memory` the spare unless the spare is larger (then `memory` is unmapped when it goes).
void OfferSpare(AnonymousMemory& memory) {
  std::lock_guard<std::mutex> lock(spare_mutex);
  if (Spare().capacity() <= memory.capacity()) Spare() = std::move(memory);
}

void NoteThreadBuffer(size_t bytes) {
  size_t seen = largest_thread_buffer.load(std::memory_order_relaxed);
  while (bytes > seen && !largest_thread_buffer.compare_exchange_weak(seen, bytes)) {
  }
}

}  // namespace

void NoteScratchpadSize(size_t bytes) {
  size_t seen = largest_scratchpad.load(std::memory_order_relaxed);
  while (bytes > seen && !largest_scratchpad.compare_exchange_weak(seen, bytes)) {
  }
}

namespace {

// A thread's scratchpad, handed on when the thread exits: it becomes the spare (unless the spare
// is larger) for the next thread that needs one, its pages already faulted in. A new thread's
// first run faulted a fresh buffer in as it went: ResNet-50 at 1 thread on a Zen 5 VM, a thread
// started per request, 61-72 ms for each thread's first run against 46-53 for its later ones
// (about 1,080 page faults, and the host's own for memory the guest had given back).
struct ThreadBuffer {
  AnonymousMemory memory;
  ThreadBuffer() = default;
  ThreadBuffer(const ThreadBuffer&) = delete;
  ThreadBuffer& operator=(const ThreadBuffer&) = delete;
  ~ThreadBuffer() {
    if (memory.capacity() > 0) OfferSpare(memory);
  }
};

}  // namespace

Result<void*> ThreadScratchpad(size_t bytes) {
  thread_local ThreadBuffer holder;
  AnonymousMemory& buffer = holder.memory;
  if (bytes <= buffer.capacity()) return buffer.mutable_bytes().data();
  bytes = std::max(bytes, largest_scratchpad.load(std::memory_order_relaxed));
  {
    std::lock_guard<std::mutex> lock(spare_mutex);
    if (Spare().capacity() >= bytes) buffer = std::move(Spare());  // leaves the spare empty
  }
  if (bytes > buffer.capacity()) {
    EPCTX_ASSIGN_OR_RETURN(buffer, AllocateScratchpad(bytes));
  }
  NoteThreadBuffer(buffer.capacity());
  return buffer.mutable_bytes().data();
}

void MapScratchpadAhead(const std::atomic<bool>& stop) {
  // One thread at a time makes the spare; a thread that finds another at it leaves the work to
  // it. So that a size noted meanwhile (a primitive made while the spare was being made) is not
  // lost, the maker looks again after letting go. (A child of fork() made while a thread was at
  // it never maps one ahead: its runs allocate their own.)
  while (!stop.load(std::memory_order_relaxed) && SpareNeeded() > 0) {
    if (making_spare.exchange(true, std::memory_order_acquire)) return;
    const size_t bytes = SpareNeeded();
    bool made = false;
    if (bytes > 0) {
      // Made and mapped outside the lock, which is only ever held for a swap (a child of fork()
      // must not find it taken for milliseconds).
      Result<AnonymousMemory> memory = AllocateScratchpad(bytes);
      if (memory.ok()) {
        memory->MapAheadForWriting(stop);
        OfferSpare(*memory);
        made = true;
      }
    }
    making_spare.store(false, std::memory_order_release);
    if (!made) return;  // nothing needed, or no memory: the run allocates its own or says why
  }
}

size_t SpareScratchpadBytes() {
  std::lock_guard<std::mutex> lock(spare_mutex);
  return Spare().capacity();
}

size_t LargestThreadScratchpadBytes() {
  return largest_thread_buffer.load(std::memory_order_relaxed);
}

dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims, dnnl::memory::format_tag tag) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, tag);
}

dnnl::memory Wrap(const dnnl::memory::desc& desc, const void* data) {
  return dnnl::memory(desc, CpuEngine(), const_cast<void*>(data));
}

}  // namespace epctx::exec::kernels::onednn
