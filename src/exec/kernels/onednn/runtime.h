// What every oneDNN-backed kernel shares: the CPU engine, a stream per calling thread, the
// session's thread budget applied to oneDNN, error conversion, and per-thread scratchpads.
#pragma once

#include <atomic>
#include <cstddef>
#include <string_view>

#include "epctx/status.h"
#include "exec/kernels/onednn/dnnl.h"

namespace epctx::exec::kernels::onednn {

// The process's CPU engine (created on first use).
const dnnl::engine& CpuEngine();

// Makes oneDNN's process-wide objects (engine, primitive cache) exist now. A component that
// registers an exit handler using oneDNN calls it first, so that those objects are destroyed
// after the handler has run.
void InitializeRuntime();

// A stream on CpuEngine() owned by the calling thread. oneDNN's CPU streams run primitives
// synchronously on the calling thread and its OpenMP team.
dnnl::stream& ThreadStream();

// oneDNN creates and runs primitives with omp_get_max_threads() threads of the calling thread;
// this sets that to the session's budget for a scope and restores it after.
class ThreadBudget {
 public:
  explicit ThreadBudget(int threads);
  ~ThreadBudget();
  ThreadBudget(const ThreadBudget&) = delete;
  ThreadBudget& operator=(const ThreadBudget&) = delete;

 private:
  int previous_;
};

// kInternal (or kUnsupported when oneDNN reports unimplemented) naming `what` and oneDNN's
// message.
Status FromDnnlError(const dnnl::error& e, std::string_view what);

// At least `bytes` bytes, 64-byte aligned, owned by the calling thread, for a primitive's
// scratchpad. Valid until the next call on the same thread. A thread's buffer is made as large
// as the largest scratchpad of the primitives made so far (NoteScratchpadSize), so that a first
// run allocates once instead of growing the buffer layer by layer; pages a primitive does not
// touch cost no memory. When the thread exits, its buffer becomes the spare the next thread
// adopts (MapScratchpadAhead), unless the spare is larger.
Result<void*> ThreadScratchpad(size_t bytes);

// Records that a primitive needing `bytes` of scratchpad exists in this process.
void NoteScratchpadSize(size_t bytes);

// Makes a buffer as large as the largest scratchpad known so far and faults it in for writing
// (stopping between 2 MiB steps once `stop` is set), for the next thread whose ThreadScratchpad
// needs a new buffer to adopt, so that a first run does not zero-fill its scratchpad as it goes.
// Does nothing while no primitive needs a scratchpad, or once some thread holds one as large.
void MapScratchpadAhead(const std::atomic<bool>& stop);

// Bytes of the buffer mapped ahead that no thread has adopted yet (0 if none).
size_t SpareScratchpadBytes();

// Bytes of the largest buffer any thread has held (0 if none).
size_t LargestThreadScratchpadBytes();

// oneDNN makes the code of its float32 GEMM (what its matmuls over plain weights run, every
// float32 matmul of more than a few rows on AVX2) at the first product that needs it, nearly
// every variant at once: 20-35 ms on a Zen 3 core, which a first run otherwise pays inside its
// first such matmul. The first call makes them with one 64 x 64 x 64 product on the calling
// thread (smaller products leave kernels unmade); later calls return at once, or wait for the
// call making them.
void WarmUpGemm();

// Plain memory descriptor of an f32 tensor of `dims` in the given tag.
dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims, dnnl::memory::format_tag tag);

// dnnl::memory over caller-owned data (never allocates).
dnnl::memory Wrap(const dnnl::memory::desc& desc, const void* data);

}  // namespace epctx::exec::kernels::onednn
