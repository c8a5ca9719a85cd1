#include "exec/kernels/indexing/strided_copy.h"
#include "exec/kernels/common/parallel_for.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

struct CollapsedBox {
  std::vector<int64_t> dims, src, dst;  // outermost first
};

CollapsedBox Collapse(std::span<const int64_t> dims, std::span<const int64_t> src,
                      std::span<const int64_t> dst) {
  CollapsedBox box;
  for (size_t d = dims.size(); d-- > 0;) {
    if (dims[d] == 1) continue;
    if (!box.dims.empty() && src[d] == box.src.back() * box.dims.back() &&
        dst[d] == box.dst.back() * box.dims.back()) {
      box.dims.back() *= dims[d];
      continue;
    }
    box.dims.push_back(dims[d]);
    box.src.push_back(src[d]);
    box.dst.push_back(dst[d]);
  }
  if (box.dims.empty()) {
    box.dims.push_back(1);
    box.src.push_back(1);
    box.dst.push_back(1);
  }
  std::reverse(box.dims.begin(), box.dims.end());
  std::reverse(box.src.begin(), box.src.end());
  std::reverse(box.dst.begin(), box.dst.end());
  return box;
}

// E is an unsigned integer of the element's size; bytes move through it unchanged.
template <typename E>
void CopyRun(const std::byte* src, int64_t src_stride, std::byte* dst, int64_t dst_stride,
             int64_t n) {
  const E* s = reinterpret_cast<const E*>(src);
  E* d = reinterpret_cast<E*>(dst);
  if (src_stride == 0) {
    const E v = *s;
    for (int64_t i = 0; i < n; ++i) d[i * dst_stride] = v;
    return;
  }
  for (int64_t i = 0; i < n; ++i) d[i * dst_stride] = s[i * src_stride];
}

template <typename E>
void FillRun(std::byte* dst, int64_t n, const std::byte* value) {
  E v;
  std::memcpy(&v, value, sizeof(E));
  E* d = reinterpret_cast<E*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = v;
}

void CopyRunAnySize(const std::byte* src, int64_t src_stride, std::byte* dst, int64_t dst_stride,
                    int64_t n, size_t element) {
  const int64_t e = static_cast<int64_t>(element);
  if (src_stride == 1 && dst_stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * element);
    return;
  }
  switch (element) {
    case 1:
      return CopyRun<uint8_t>(src, src_stride, dst, dst_stride, n);
    case 2:
      return CopyRun<uint16_t>(src, src_stride, dst, dst_stride, n);
    case 4:
      return CopyRun<uint32_t>(src, src_stride, dst, dst_stride, n);
    case 8:
      return CopyRun<uint64_t>(src, src_stride, dst, dst_stride, n);
    default:
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(dst + i * dst_stride * e, src + i * src_stride * e, element);
      }
  }
}

}  // namespace

Result<std::vector<int64_t>> ContiguousStrides(std::span<const int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) {
    EPCTX_ASSIGN_OR_RETURN(strides[d - 1], CheckedDimProduct(shape.subspan(d)));
  }
  return strides;
}

namespace {

// Calls run(src_offset, dst_offset, n, src_stride, dst_stride) (in elements) for every innermost
// run of the box, rows split among `threads` when the copy moves enough bytes (`element` each).
template <typename RunFn>
void ForEachRun(std::span<const int64_t> dims, std::span<const int64_t> src_strides,
                std::span<const int64_t> dst_strides, size_t element, int threads, RunFn&& run) {
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  const CollapsedBox box = Collapse(dims, src_strides, dst_strides);
  const size_t rank = box.dims.size();
  const int64_t n = box.dims[rank - 1];
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= box.dims[d];
  const int64_t e = static_cast<int64_t>(element);
  const int nt = ThreadsFor(threads, rows * n * e, int64_t{1} << 18);
  ParallelForRanges(nt, rows, 1, [&](int64_t begin, int64_t end) {
    // An odometer over the outer dims, started at `begin`.
    std::vector<int64_t> index(rank, 0);
    int64_t so = 0, dof = 0;
    int64_t rest = begin;
    for (size_t d = rank - 1; d-- > 0;) {
      index[d] = rest % box.dims[d];
      rest /= box.dims[d];
      so += index[d] * box.src[d];
      dof += index[d] * box.dst[d];
    }
    for (int64_t row = begin; row < end; ++row) {
      run(so, dof, n, box.src[rank - 1], box.dst[rank - 1]);
      for (size_t d = rank - 1; d-- > 0;) {
        so += box.src[d];
        dof += box.dst[d];
        if (++index[d] < box.dims[d]) break;
        so -= box.src[d] * box.dims[d];
        dof -= box.dst[d] * box.dims[d];
        index[d] = 0;
      }
    }
  });
}

}  // namespace

void CopyStrided(std::span<const int64_t> dims, const std::byte* src,
                 std::span<const int64_t> src_strides, std::byte* dst,
                 std::span<const int64_t> dst_strides, size_t element, int threads) {
  const int64_t e = static_cast<int64_t>(element);
  ForEachRun(dims, src_strides, dst_strides, element, threads,
             [&](int64_t so, int64_t dof, int64_t n, int64_t ss, int64_t ds) {
               CopyRunAnySize(src + so * e, ss, dst + dof * e, ds, n, element);
             });
}

void CopyStrided(std::span<const int64_t> dims, const std::string* src,
                 std::span<const int64_t> src_strides, std::string* dst,
                 std::span<const int64_t> dst_strides, int threads) {
  ForEachRun(dims, src_strides, dst_strides, sizeof(std::string), threads,
             [&](int64_t so, int64_t dof, int64_t n, int64_t ss, int64_t ds) {
               for (int64_t i = 0; i < n; ++i) dst[dof + i * ds] = src[so + i * ss];
             });
}

void CopyStridedTensor(std::span<const int64_t> dims, const Tensor& src, int64_t src_offset,
                       std::span<const int64_t> src_strides, Tensor& dst,
                       std::span<const int64_t> dst_strides, int threads) {
  if (src.dtype() == DataType::kString) {
    CopyStrided(dims, src.data_as<std::string>() + src_offset, src_strides,
                dst.mutable_data_as<std::string>(), dst_strides, threads);
    return;
  }
  const size_t element = DataTypeSize(src.dtype());
  CopyStrided(dims, static_cast<const std::byte*>(src.data()) + src_offset * element, src_strides,
              static_cast<std::byte*>(dst.mutable_data()), dst_strides, element, threads);
}

void FillElements(std::byte* dst, int64_t count, const std::byte* value, size_t element) {
  if (count <= 0) return;
  bool zero = true;
  for (size_t i = 0; i < element; ++i) zero = zero && value[i] == std::byte{0};
  if (zero) {
    std::memset(dst, 0, static_cast<size_t>(count) * element);
    return;
  }
  switch (element) {
    case 1:
      std::memset(dst, static_cast<int>(value[0]), static_cast<size_t>(count));
      return;
    case 2:
      return FillRun<uint16_t>(dst, count, value);
    case 4:
      return FillRun<uint32_t>(dst, count, value);
    case 8:
      return FillRun<uint64_t>(dst, count, value);
    default:
      for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * element, value, element);
  }
}

}  // namespace epctx::exec::kernels
