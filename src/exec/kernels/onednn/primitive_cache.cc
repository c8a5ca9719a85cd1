#include "exec/kernels/onednn/primitive_cache.h"

#include <mutex>
#include <unordered_map>

#include "exec/kernels/onednn/runtime.h"

namespace epctx::exec::kernels::onednn {
namespace {

// Models with dynamic shapes can ask for a new problem on every run; past this many entries the
// cache starts over (entries in use live on in their kernels).
constexpr size_t kMaxEntries = 4096;

struct Slot {
  std::mutex mutex;
  std::shared_ptr<const CachedPrimitive> value;
};

struct Cache {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots;
};

Cache& TheCache() {
  static Cache* cache = new Cache();  // never destroyed: kernels may outlive static destructors
  return *cache;
}

}  // namespace

Result<std::shared_ptr<const CachedPrimitive>> GetOrCreatePrimitive(const std::string& key,
                                                                    const PrimitiveMaker& make) {
  Cache& cache = TheCache();
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto it = cache.slots.find(key);
    if (it == cache.slots.end()) {
      if (cache.slots.size() >= kMaxEntries) cache.slots.clear();
      it = cache.slots.emplace(key, std::make_shared<Slot>()).first;
    }
    slot = it->second;
  }
  std::lock_guard<std::mutex> lock(slot->mutex);
  if (slot->value == nullptr) {
    Result<CachedPrimitive> made = make();
    if (!made.ok()) return made.status();
    NoteScratchpadSize(made->scratchpad_bytes);
    slot->value = std::make_shared<const CachedPrimitive>(std::move(*made));
  }
  return slot->value;
}

size_t CachedPrimitiveCount() {
  Cache& cache = TheCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  return cache.slots.size();
}

}  // namespace epctx::exec::kernels::onednn
