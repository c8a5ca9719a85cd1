// Multidirectional (numpy) broadcasting: the output shape, and an iteration over the output in
// runs of its innermost dims, collapsed as far as the operands' layouts allow so that the common
// cases (same shape, a scalar, a per-channel [C,1,1] operand) become a few long runs.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "epctx/status.h"
#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/threads.h"

namespace epctx::exec::kernels {

Result<std::vector<int64_t>> BroadcastShapes(std::span<const int64_t> a,
                                             std::span<const int64_t> b);

// Element strides of a tensor of `shape` read as one of `out` (right-aligned, 0 on the dims it
// is broadcast along), one per dim of `out`. `out` must be a broadcast of `shape`.
std::vector<int64_t> BroadcastStrides(std::span<const int64_t> shape, std::span<const int64_t> out);

// `out` broadcast from `a` and `b` as collapsed dims (innermost last, never empty) with each
// operand's element strides, 0 where the operand is broadcast. Innermost strides are 0 or 1.
struct BroadcastPlan {
  std::vector<int64_t> dims;
  std::vector<int64_t> a_strides;
  std::vector<int64_t> b_strides;
  int64_t element_count = 0;
};
BroadcastPlan PlanBroadcast(std::span<const int64_t> a, std::span<const int64_t> b,
                            std::span<const int64_t> out);

namespace broadcast_detail {

// Outer dims an odometer row walk keeps an index for (collapsed plans rarely have more than 4).
inline constexpr size_t kMaxOuterDims = 16;

// The operands' element offsets where row `row` starts; `index` (if not null) receives the row's
// index in each outer dim.
inline void RowStart(const BroadcastPlan& plan, int64_t row, int64_t* index, int64_t& a_off,
                     int64_t& b_off) {
  a_off = 0;
  b_off = 0;
  for (size_t d = plan.dims.size() - 1; d-- > 0;) {
    const int64_t i = row % plan.dims[d];
    row /= plan.dims[d];
    if (index != nullptr) index[d] = i;
    a_off += i * plan.a_strides[d];
    b_off += i * plan.b_strides[d];
  }
}

// Rows [first, last) of a plan whose rows are not split: the operands' offsets of `first` are
// computed once and then stepped like an odometer, so a row costs no division. That matters
// when rows are short, e.g. a per-channel scale of a 16-channel blocked layout (rows of 16).
template <typename RunFn>
void RunWholeRows(const BroadcastPlan& plan, int64_t first, int64_t last, RunFn& run) {
  const size_t outer = plan.dims.size() - 1;
  const int64_t inner = plan.dims[outer];
  std::array<int64_t, kMaxOuterDims> index{};
  int64_t a_off = 0;
  int64_t b_off = 0;
  RowStart(plan, first, index.data(), a_off, b_off);
  for (int64_t row = first; row < last; ++row) {
    run(row * inner, a_off, b_off, inner, plan.a_strides[outer], plan.b_strides[outer]);
    for (size_t d = outer; d-- > 0;) {
      if (++index[d] < plan.dims[d]) {
        a_off += plan.a_strides[d];
        b_off += plan.b_strides[d];
        break;
      }
      a_off -= (plan.dims[d] - 1) * plan.a_strides[d];
      b_off -= (plan.dims[d] - 1) * plan.b_strides[d];
      index[d] = 0;
    }
  }
}

}  // namespace broadcast_detail

// Calls run(out_offset, a_offset, b_offset, count, a_step, b_step) for every run of the
// innermost collapsed dim, splitting long runs so that every thread gets work.
template <typename RunFn>
void ForEachBroadcastRun(const BroadcastPlan& plan, int threads, RunFn&& run) {
  if (plan.element_count == 0) return;
  const size_t rank = plan.dims.size();
  const int64_t inner = plan.dims[rank - 1];
  const int64_t rows = plan.element_count / inner;
  const int nt = ThreadsFor(threads, plan.element_count);
  const int64_t chunks = rows >= nt ? 1 : (nt + rows - 1) / rows;
  const int64_t chunk = (inner + chunks - 1) / chunks;
  const int64_t as = plan.a_strides[rank - 1];
  const int64_t bs = plan.b_strides[rank - 1];
  const int64_t grain = std::max<int64_t>(1, kMinParallelElements / 8 / chunk);
  ParallelForRanges(nt, rows * chunks, grain, [&](int64_t first, int64_t last) {
    if (chunks == 1 && rank - 1 <= broadcast_detail::kMaxOuterDims) {
      broadcast_detail::RunWholeRows(plan, first, last, run);
      return;
    }
    for (int64_t task = first; task < last; ++task) {
      const int64_t row = task / chunks;
      const int64_t begin = (task % chunks) * chunk;
      const int64_t count = std::min(inner, begin + chunk) - begin;
      if (count <= 0) continue;
      int64_t a_off = 0;
      int64_t b_off = 0;
      broadcast_detail::RowStart(plan, row, nullptr, a_off, b_off);
      run(row * inner + begin, a_off + begin * as, b_off + begin * bs, count, as, bs);
    }
  });
}

}  // namespace epctx::exec::kernels
