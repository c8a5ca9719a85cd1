#include "exec/kernels/common/copy.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {

Status CopyAxisRange(const Tensor& in, size_t axis, int64_t begin, int64_t size, Tensor& out) {
  const std::vector<int64_t>& dims = in.shape();
  EPCTX_ASSIGN_OR_RETURN(const int64_t outer, CheckedDimProduct(dims, 0, axis));
  EPCTX_ASSIGN_OR_RETURN(const int64_t inner, CheckedDimProduct(dims, axis + 1, dims.size()));
  // Elements per outer index in `in`, and in `out` (no more: size <= dims[axis]).
  EPCTX_ASSIGN_OR_RETURN(const int64_t from_row, CheckedDimProduct(dims, axis, dims.size()));
  const int64_t to_row = size * inner;
  if (to_row == 0) return Status::Ok();
  if (in.dtype() == DataType::kString) {
    const auto* src = in.data_as<std::string>();
    auto* dst = out.mutable_data_as<std::string>();
    for (int64_t o = 0; o < outer; ++o) {
      std::copy_n(src + o * from_row + begin * inner, to_row, dst + o * to_row);
    }
    return Status::Ok();
  }
  const size_t elem = DataTypeSize(in.dtype());
  const auto* src = static_cast<const std::byte*>(in.data());
  auto* dst = static_cast<std::byte*>(out.mutable_data());
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(dst + static_cast<size_t>(o * to_row) * elem,
                src + static_cast<size_t>(o * from_row + begin * inner) * elem,
                static_cast<size_t>(to_row) * elem);
  }
  return Status::Ok();
}

Status CopyToOutput(KernelContext& ctx, size_t index, const Tensor& in,
                    std::vector<int64_t> shape) {
  // A sequence or an empty optional is immutable and owns its elements: the output is the same
  // value.
  if (!in.is_tensor()) return ctx.SetOutput(index, in);
  if (in.dtype() == DataType::kString) {
    EPCTX_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(index, in.dtype(), std::move(shape)));
    if (out->element_count() != in.element_count()) {
      return EPCTX_ERROR(kInternal, "copy of {} strings into an output of {}", in.element_count(),
                         out->element_count());
    }
    std::copy_n(in.data_as<std::string>(), in.element_count(), out->mutable_data_as<std::string>());
    return Status::Ok();
  }
  if (DataTypeSize(in.dtype()) == 0) {
    return EPCTX_ERROR(kUnsupported, "cannot copy a tensor of type {}", DataTypeName(in.dtype()));
  }
  EPCTX_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(index, in.dtype(), std::move(shape)));
  if (out->byte_size() != in.byte_size()) {
    return EPCTX_ERROR(kInternal, "copy of {} bytes into an output of {} bytes", in.byte_size(),
                       out->byte_size());
  }
  const size_t bytes = in.byte_size();
  if (bytes == 0) return Status::Ok();
  // Large copies are bandwidth-bound; two streams go faster than one on most machines.
  constexpr int64_t kMinParallelBytes = int64_t{1} << 20;
  const int nt = ThreadsFor(ctx.num_threads(), static_cast<int64_t>(bytes), kMinParallelBytes);
  const auto* src = static_cast<const std::byte*>(in.data());
  auto* dst = static_cast<std::byte*>(out->mutable_data());
  ParallelForRanges(nt, static_cast<int64_t>(bytes), kMinParallelBytes / 4,
                    [&](int64_t begin, int64_t end) {
                      std::memcpy(dst + begin, src + begin, static_cast<size_t>(end - begin));
                    });
  return Status::Ok();
}

Status ViewOrCopy(KernelContext& ctx, size_t index, size_t input, const Tensor& in,
                  std::vector<int64_t> shape) {
  if (!in.is_tensor()) return ctx.SetOutput(index, in);
  if (ctx.ShareInput(index, input, shape)) return Status::Ok();
  return CopyToOutput(ctx, index, in, std::move(shape));
}

}  // namespace epctx::exec::kernels
