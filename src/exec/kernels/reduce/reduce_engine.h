// The loops of the Reduce* ops over a ReducePlan, generic in the combining functor `Op`:
//   Op::Init()               value of an empty reduction
//   Op::Map(x, shift)        what each element contributes
//   Op::Combine(a, b)        associative combination of contributions
//   Op::Finish(acc, n, shift) the output from the combined value of n elements
// `shift` is a per-output value (the maximum, for a stable log-sum-exp) when Op::kShifted.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/reduce/reduce_plan.h"

namespace epctx::exec::kernels {

// Iterates the offsets of a set of dims (outermost first) in row-major order.
class DimOdometer {
 public:
  DimOdometer(std::vector<int64_t> dims, std::vector<int64_t> strides)
      : dims_(std::move(dims)), strides_(std::move(strides)), index_(dims_.size(), 0) {}

  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : dims_) n *= d;
    return n;
  }
  // Positions the odometer at linear index `i`.
  void Seek(int64_t i) {
    offset_ = 0;
    for (size_t d = dims_.size(); d-- > 0;) {
      index_[d] = i % dims_[d];
      i /= dims_[d];
      offset_ += index_[d] * strides_[d];
    }
  }
  int64_t offset() const { return offset_; }
  void Next() {
    for (size_t d = dims_.size(); d-- > 0;) {
      offset_ += strides_[d];
      if (++index_[d] < dims_[d]) return;
      offset_ -= strides_[d] * dims_[d];
      index_[d] = 0;
    }
  }

 private:
  std::vector<int64_t> dims_;
  std::vector<int64_t> strides_;
  std::vector<int64_t> index_;
  int64_t offset_ = 0;
};

// Four independent accumulators for floating-point types: the additions of a long run do not
// wait on each other. Integer runs take one: GCC 12.2 at -O3 vectorizes the four-accumulator
// loop over integers whose additions wrap through the unsigned type wrongly (x86-64, AVX2 and
// AVX-512 alike: the int64 sum of 0..15 came out 64, not 120;
// ReduceTest.IntegerRunsOfEveryLength), and integer additions are associative, so the compiler
// may split one accumulator itself.
template <class Op, typename T>
T ReduceRun(const T* x, int64_t n, T shift) {
  if constexpr (std::is_integral_v<T>) {
    T a = Op::Init();
    for (int64_t i = 0; i < n; ++i) a = Op::Combine(a, Op::Map(x[i], shift));
    return a;
  }
  T a0 = Op::Init(), a1 = Op::Init(), a2 = Op::Init(), a3 = Op::Init();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    a0 = Op::Combine(a0, Op::Map(x[i], shift));
    a1 = Op::Combine(a1, Op::Map(x[i + 1], shift));
    a2 = Op::Combine(a2, Op::Map(x[i + 2], shift));
    a3 = Op::Combine(a3, Op::Map(x[i + 3], shift));
  }
  for (; i < n; ++i) a0 = Op::Combine(a0, Op::Map(x[i], shift));
  return Op::Combine(Op::Combine(a0, a1), Op::Combine(a2, a3));
}

// Reduces `x` into `y` (plan.output_count elements); `shift` has one value per output when
// Op::kShifted, else it is ignored.
template <class Op, typename T>
void Reduce(const ReducePlan& plan, const T* x, T* y, const std::type_identity_t<T>* shift,
            int threads) {
  if (plan.output_count == 0) return;
  if (plan.reduce_count == 0) {
    for (int64_t o = 0; o < plan.output_count; ++o) y[o] = Op::Finish(Op::Init(), 0, T(0));
    return;
  }
  std::vector<int64_t> kept_dims, kept_strides, red_dims, red_strides;
  const size_t last = plan.dims.size() - 1;
  for (size_t d = 0; d < last; ++d) {
    (plan.reduced[d] ? red_dims : kept_dims).push_back(plan.dims[d]);
    (plan.reduced[d] ? red_strides : kept_strides).push_back(plan.strides[d]);
  }
  const int64_t n = plan.dims[last];
  const int64_t count = plan.reduce_count;
  const int nt = ThreadsFor(threads, plan.output_count * count);
  if (plan.reduced[last]) {
    // Each output combines runs of n contiguous elements.
    ParallelForRanges(nt, plan.output_count, 1, [&](int64_t begin, int64_t end) {
      DimOdometer outer(kept_dims, kept_strides);
      DimOdometer inner(red_dims, red_strides);
      const int64_t runs = inner.count();
      for (int64_t o = begin; o < end; ++o) {
        outer.Seek(o);
        inner.Seek(0);
        const T s = Op::kShifted ? shift[o] : T(0);
        T acc = Op::Init();
        for (int64_t r = 0; r < runs; ++r) {
          acc = Op::Combine(acc, ReduceRun<Op>(x + outer.offset() + inner.offset(), n, s));
          inner.Next();
        }
        y[o] = Op::Finish(acc, count, s);
      }
    });
    return;
  }
  // The innermost dim is kept: rows of n outputs accumulate rows of n contiguous inputs. Rows
  // are split into chunks when there are fewer rows than threads.
  DimOdometer rows_of(kept_dims, kept_strides);
  const int64_t rows = rows_of.count();
  const int64_t chunks = rows >= nt ? 1 : (nt + rows - 1) / rows;
  const int64_t chunk = (n + chunks - 1) / chunks;
  const int64_t tasks = rows * chunks;
  ParallelForRanges(nt, tasks, 1, [&](int64_t first_task, int64_t end_task) {
    DimOdometer outer(kept_dims, kept_strides);
    DimOdometer inner(red_dims, red_strides);
    const int64_t runs = inner.count();
    for (int64_t task = first_task; task < end_task; ++task) {
      const int64_t row = task / chunks;
      const int64_t begin = (task % chunks) * chunk;
      const int64_t len = std::min(n, begin + chunk) - begin;
      if (len <= 0) continue;
      outer.Seek(row);
      inner.Seek(0);
      T* out = y + row * n + begin;
      const T* s = Op::kShifted ? shift + row * n + begin : nullptr;
      for (int64_t j = 0; j < len; ++j) out[j] = Op::Init();
      for (int64_t r = 0; r < runs; ++r) {
        const T* in = x + outer.offset() + inner.offset() + begin;
        if constexpr (Op::kShifted) {
          for (int64_t j = 0; j < len; ++j) out[j] = Op::Combine(out[j], Op::Map(in[j], s[j]));
        } else {
          for (int64_t j = 0; j < len; ++j) out[j] = Op::Combine(out[j], Op::Map(in[j], T(0)));
        }
        inner.Next();
      }
      for (int64_t j = 0; j < len; ++j) out[j] = Op::Finish(out[j], count, s ? s[j] : T(0));
    }
  });
}

}  // namespace epctx::exec::kernels
