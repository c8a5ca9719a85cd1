// The axis semantics that Softmax-like ops (LogSoftmax, Hardmax) changed at opset 13: before it,
// the input is a 2-D matrix [prod(dims[:axis]), prod(dims[axis:])] normalized per row (axis
// defaults to 1 and may equal the rank); from 13 on only the single dim `axis` (default -1) is.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx::exec::kernels {

// The input as [outer, len, inner]: the op works along `len`, for each outer and inner index.
struct AxisSplit {
  int64_t outer = 1;
  int64_t len = 1;
  int64_t inner = 1;
};

inline int64_t DefaultSoftmaxAxis(bool single_axis) {
  return single_axis ? -1 : 1;
}

Result<AxisSplit> SplitAtSoftmaxAxis(const std::vector<int64_t>& shape, int64_t axis,
                                     bool single_axis);

// kUnsupported unless `type` is float32, float64 or not known yet (kUndefined).
Status ExpectFloat32Or64(DataType type, std::string_view name);

}  // namespace epctx::exec::kernels
