#include "exec/kernels/dnnl/primitive_memo.h"

#include "exec/kernels/dnnl/runtime.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {

std::shared_ptr<const CachedPrimitive> PrimitiveMemo::Find(const std::vector<int64_t>& shape,
                                                           int threads) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (last_ != nullptr && threads_ == threads && shape_ == shape) return last_;
  return nullptr;
}

void PrimitiveMemo::Remember(const std::vector<int64_t>& shape, int threads,
                             std::shared_ptr<const CachedPrimitive> primitive) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (first_ == nullptr && primitive != nullptr) {
    first_ = primitive;
    name_.store(&first_->implementation, std::memory_order_release);
  }
  last_ = std::move(primitive);
  shape_ = shape;
  threads_ = threads;
}

std::string_view PrimitiveMemo::implementation() const {
  const std::string* name = name_.load(std::memory_order_acquire);
  return name != nullptr ? std::string_view(*name) : std::string_view("onednn");
}

Status ExecutePrimitive(const CachedPrimitive& prim, std::unordered_map<int, dnnl::memory>& args,
                        int threads, std::string_view what) {
  try {
    ThreadBudget budget(prim.threads > 0 ? prim.threads : threads);
    if (prim.scratchpad_bytes > 0) {
      EPCTX_ASSIGN_OR_RETURN(void* scratch, ThreadScratchpad(prim.scratchpad_bytes));
      args.insert_or_assign(
          DNNL_ARG_SCRATCHPAD,
          Wrap(dnnl::memory::desc({static_cast<int64_t>(prim.scratchpad_bytes)},
                                  dnnl::memory::data_type::u8, dnnl::memory::format_tag::x),
               scratch));
    }
    prim.primitive.execute(ThreadStream(), args);
  } catch (const dnnl::error& e) {
    return FromDnnlError(e, fmt::format("running {}", what));
  }
  return Status::Ok();
}

}  // namespace epctx::exec::kernels::onednn
