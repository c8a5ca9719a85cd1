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
#include "exec/kernels/onednn/primitive_cache.h"

namespace epctx::exec::kernels::onednn {

class PrimitiveMemo {
 public:
  // The remembered primitive for (shape, threads), or null.
  std::shared_ptr<const CachedPrimitive> Find(const std::vector<int64_t>& shape, int threads);
  void Remember(const std::vector<int64_t>& shape, int threads,
                std::shared_ptr<const CachedPrimitive> primitive);
  // The remembered primitive for (shape, threads); else the process's one named `key()` (the key
  // is built only then: steady runs skip it), made by `make` when absent, and remembered.
  template <typename KeyFn>
  Result<std::shared_ptr<const CachedPrimitive>> FindOrCreate(const std::vector<int64_t>& shape,
                                                              int threads, KeyFn&& key,
                                                              const PrimitiveMaker& make) {
    if (auto prim = Find(shape, threads)) return prim;
    Result<std::shared_ptr<const CachedPrimitive>> prim = GetOrCreatePrimitive(key(), make);
    if (prim.ok()) Remember(shape, threads, *prim);
    return prim;
  }
  // "onednn:" and oneDNN's name of the first primitive this kernel ran ("onednn" before).
  std::string_view implementation() const;
  // Whether the kernel has made or found a primitive.
  bool made_any() const { return name_.load(std::memory_order_acquire) != nullptr; }

 private:
  std::shared_ptr<const CachedPrimitive> first_;  // kept, so that its name stays valid
  std::atomic<const std::string*> name_{nullptr};
  std::mutex mutex_;  // sessions may run one kernel from several threads at once
  std::shared_ptr<const CachedPrimitive> last_;
  std::vector<int64_t> shape_;
  int threads_ = 0;
};

// Runs `prim` on `args` with `threads` threads, adding its scratchpad (per calling thread).
Status ExecutePrimitive(const CachedPrimitive& prim, std::unordered_map<int, dnnl::memory>& args,
                        int threads, std::string_view what);

// ExecutePrimitive for a primitive of one source and one destination (a pooling, a reorder):
// `src` read through `src_md` as argument `src_arg`, `dst` written through `dst_md` as `dst_arg`.
Status ExecuteSrcToDst(const CachedPrimitive& prim, int src_arg, const dnnl::memory::desc& src_md,
                       const void* src, int dst_arg, const dnnl::memory::desc& dst_md,
                       const void* dst, int threads, std::string_view what);

}  // namespace epctx::exec::kernels::onednn
