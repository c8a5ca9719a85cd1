#include "exec/kernels/dnnl/runtime.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <utility>

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

Status FromDnnlError(const dnnl::error& e, std::string_view what) {
  if (e.status == dnnl_unimplemented) {
    return EPCTX_ERROR(kUnsupported, "oneDNN has no implementation for {}: {}", what, e.what());
  }
  return EPCTX_ERROR(kInternal, "oneDNN failed on {}: {} (status {})", what, e.what(),
                     static_cast<int>(e.status));
}

namespace {
std::atomic<size_t> largest_scratchpad{0};
}  // namespace

void NoteScratchpadSize(size_t bytes) {
  size_t seen = largest_scratchpad.load(std::memory_order_relaxed);
  while (bytes > seen && !largest_scratchpad.compare_exchange_weak(seen, bytes)) {
  }
}

Result<void*> ThreadScratchpad(size_t bytes) {
  thread_local AnonymousMemory buffer;
  if (bytes <= buffer.capacity()) return buffer.mutable_bytes().data();
  bytes = std::max(bytes, largest_scratchpad.load(std::memory_order_relaxed));
  // Large scratchpads (a Winograd convolution's is 10 MiB in ResNet-50) come in 2 MiB pages:
  // their first run faults a few huge pages instead of thousands of 4 KiB ones.
  const bool huge = bytes >= AnonymousMemory::kHugePageSize / 2;
  auto memory = AnonymousMemory::Allocate(
      bytes, huge ? AnonymousMemory::kHugePageSize : static_cast<size_t>(::sysconf(_SC_PAGESIZE)),
      /*huge_pages=*/huge);
  if (!memory.ok()) {
    return EPCTX_ERROR(kFailedPrecondition, "cannot allocate a {}-byte oneDNN scratchpad: {}",
                       bytes, memory.status().message());
  }
  buffer = std::move(*memory);
  return buffer.mutable_bytes().data();
}

dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims, dnnl::memory::format_tag tag) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, tag);
}

dnnl::memory Wrap(const dnnl::memory::desc& desc, const void* data) {
  return dnnl::memory(desc, CpuEngine(), const_cast<void*>(data));
}

}  // namespace epctx::exec::kernels::onednn
