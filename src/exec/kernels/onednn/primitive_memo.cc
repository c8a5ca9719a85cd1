#include "exec/kernels/onednn/primitive_memo.h"

#include "exec/kernels/onednn/runtime.h"
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

Status AddSourceConversion(CachedPrimitive& prim, const dnnl::memory::desc& from,
                           const dnnl::memory::desc& to) {
  try {
    prim.to_source =
        dnnl::reorder(dnnl::reorder::primitive_desc(CpuEngine(), from, CpuEngine(), to));
  } catch (const dnnl::error& e) {
    return FromDnnlError(e, "creating the conversion of a source to bfloat16");
  }
  constexpr size_t kAlignment = 64;
  prim.source = to;
  prim.source_offset = (prim.scratchpad_bytes + kAlignment - 1) / kAlignment * kAlignment;
  prim.scratchpad_bytes = prim.source_offset + to.get_size();
  return Status::Ok();
}

Status ExecutePrimitive(const CachedPrimitive& prim, std::unordered_map<int, dnnl::memory>& args,
                        int threads, std::string_view what) {
  try {
    ThreadBudget budget(prim.threads > 0 ? prim.threads : threads);
    if (prim.scratchpad_bytes > 0) {
      EPCTX_ASSIGN_OR_RETURN(void* scratch, ThreadScratchpad(prim.scratchpad_bytes));
      const size_t own_bytes = prim.to_source ? prim.source_offset : prim.scratchpad_bytes;
      if (own_bytes > 0) {
        args.insert_or_assign(
            DNNL_ARG_SCRATCHPAD,
            Wrap(dnnl::memory::desc({static_cast<int64_t>(own_bytes)}, dnnl::memory::data_type::u8,
                                    dnnl::memory::format_tag::x),
                 scratch));
      }
      if (prim.to_source) {
        auto src = args.find(DNNL_ARG_SRC);
        if (src == args.end()) {
          return EPCTX_ERROR(kInternal, "running {}: no source to convert", what);
        }
        dnnl::memory converted =
            Wrap(prim.source, static_cast<char*>(scratch) + prim.source_offset);
        prim.to_source->execute(ThreadStream(), src->second, converted);
        src->second = converted;
      }
    }
    prim.primitive.execute(ThreadStream(), args);
  } catch (const dnnl::error& e) {
    return FromDnnlError(e, fmt::format("running {}", what));
  }
  return Status::Ok();
}

Status ExecuteSrcToDst(const CachedPrimitive& prim, int src_arg, const dnnl::memory::desc& src_md,
                       const void* src, int dst_arg, const dnnl::memory::desc& dst_md,
                       const void* dst, int threads, std::string_view what) {
  std::unordered_map<int, dnnl::memory> args;
  try {
    args.emplace(src_arg, Wrap(src_md, src));
    args.emplace(dst_arg, Wrap(dst_md, dst));
  } catch (const dnnl::error& e) {
    return FromDnnlError(e, fmt::format("preparing {}", what));
  }
  return ExecutePrimitive(prim, args, threads, what);
}

}  // namespace epctx::exec::kernels::onednn
