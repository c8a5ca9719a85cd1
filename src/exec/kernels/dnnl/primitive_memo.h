// The primitive a kernel used last (for one input shape and thread count), so that steady runs
// skip building the cache key; and running a cached primitive with its scratchpad.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "epctx/status.h"
#include "exec/kernels/dnnl/primitive_cache.h"
#include "exec/kernels/dnnl/runtime.h"

namespace epctx::exec::kernels::onednn {

class PrimitiveMemo {
 public:
  // The remembered primitive for (shape, threads), or null.
  std::shared_ptr<const CachedPrimitive> Find(const std::vector<int64_t>& shape, int threads);
  void Remember(const std::vector<int64_t>& shape, int threads,
                std::shared_ptr<const CachedPrimitive> primitive);
  // "onednn:" and oneDNN's name of the first primitive this kernel ran ("onednn" before).
  std::string_view implementation() const;

 private:
  std::shared_ptr<const CachedPrimitive> first_;  // kept, so that its name stays valid
  std::atomic<const std::string*> name_{nullptr};
  std::mutex mutex_;  // sessions may run one kernel from several threads at once
  std::shared_ptr<const CachedPrimitive> last_;
  std::vector<int64_t> shape_;
  int threads_ = 0;
};

// The argument memories of the last primitive a kernel ran, kept so that a steady run only points
// them at its tensors (dnnl::memory::set_data_handle, 0.04 us for five) instead of making them
// (descriptors, memories and their map: 1.3 us a call, 0.1 ms a run of EfficientNet-B0's 81
// convolutions). One run at a time uses them; a run that finds them in use makes its own.
class PrimitiveArgs {
 public:
  // The arguments to fill for `prim` (kept: its memories stay valid while the arguments do): the
  // kept ones when they are free, emptied first if they were made for another primitive, else
  // `own`. Hold the returned lock until the primitive has run.
  std::unordered_map<int, dnnl::memory>& Acquire(const std::shared_ptr<const CachedPrimitive>& prim,
                                                 std::unique_lock<std::mutex>& lock,
                                                 std::unordered_map<int, dnnl::memory>& own);

 private:
  std::mutex mutex_;
  std::shared_ptr<const CachedPrimitive> prim_;
  std::unordered_map<int, dnnl::memory> args_;
};

// Points argument `arg` at `data`, making its memory with make_desc() the first time.
template <typename MakeDesc>
void SetArg(std::unordered_map<int, dnnl::memory>& args, int arg, const void* data,
            MakeDesc&& make_desc) {
  auto it = args.find(arg);
  if (it != args.end()) {
    it->second.set_data_handle(const_cast<void*>(data));
  } else {
    args.emplace(arg, dnnl::memory(make_desc(), CpuEngine(), const_cast<void*>(data)));
  }
}

// Runs `prim` on `args` with `threads` threads, adding its scratchpad (per calling thread).
Status ExecutePrimitive(const CachedPrimitive& prim, std::unordered_map<int, dnnl::memory>& args,
                        int threads, std::string_view what);

}  // namespace epctx::exec::kernels::onednn
