// Process-wide oneDNN primitives, keyed by the problem they solve. Creating a primitive
// generates machine code (milliseconds for a network); it happens once per problem per
// process, on the first run that needs it, and every later session of any model that has the
// same problem reuses it. Sessions therefore stay cheap to create (no primitive is made at
// load) and a second session's first run costs what a steady run costs.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "epctx/status.h"
#include "exec/kernels/onednn/dnnl.h"

namespace epctx::exec::kernels::onednn {

struct CachedPrimitive {
  dnnl::primitive primitive;
  // The thread scratchpad it needs: oneDNN's own, then the converted source, if any.
  size_t scratchpad_bytes = 0;
  // Threads to run it with when it must not use the session's count (0: the session's): a
  // Winograd layout packed for one thread count is read by a primitive made for that count.
  int threads = 0;
  // "onednn:" and oneDNN's name for its code ("onednn:jit:avx512_core").
  std::string implementation;
  // Layouts the primitive reads and writes (the kernel wraps its tensors in them).
  dnnl::memory::desc weights;
  dnnl::memory::desc bias;
  dnnl::memory::desc residual;
  // A bfloat16 primitive (compute_type.h) reads its float32 source through `to_source`, run
  // before it into the thread's scratchpad at `source_offset`, in the layout `source`.
  std::optional<dnnl::reorder> to_source;
  dnnl::memory::desc source;
  size_t source_offset = 0;
};

// Makes `prim` round its source, given as `from`, into the bfloat16 layout `to` the primitive
// reads, before every run (after oneDNN's scratchpad in the thread's buffer).
Status AddSourceConversion(CachedPrimitive& prim, const dnnl::memory::desc& from,
                           const dnnl::memory::desc& to);

using PrimitiveMaker = std::function<Result<CachedPrimitive>()>;

// The entry for `key`, made with `make` when absent. Concurrent callers with one key wait for
// a single creation; a failed creation is not cached.
Result<std::shared_ptr<const CachedPrimitive>> GetOrCreatePrimitive(const std::string& key,
                                                                    const PrimitiveMaker& make);

// Entries in the cache (tests).
size_t CachedPrimitiveCount();

}  // namespace epctx::exec::kernels::onednn
