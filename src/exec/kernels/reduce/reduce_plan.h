// Which input elements a Reduce* op combines into each output element. The input dims are
// collapsed into alternating kept and reduced groups, so that loops run over long strides
// whatever the axes were.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "epctx/status.h"

namespace epctx::exec::kernels {

struct ReducePlan {
  std::vector<int64_t> output_shape;
  // Empty axes with noop_with_empty_axes: no dim is reduced, each element alone (the output is
  // the input for the reductions whose one-element result is the element).
  bool noop = false;
  int64_t output_count = 0;
  int64_t reduce_count = 0;  // input elements per output element
  // Collapsed input dims, outermost first, never empty; meaningful when both counts are > 0.
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;  // element strides of `dims` in the input
  std::vector<bool> reduced;
};

// `axes` as given by the model (negative from the end); empty means every axis unless
// `noop_with_empty_axes`. Repeated or out-of-range axes are errors.
Result<ReducePlan> PlanReduce(std::span<const int64_t> shape, std::span<const int64_t> axes,
                              bool keepdims, bool noop_with_empty_axes);

}  // namespace epctx::exec::kernels
