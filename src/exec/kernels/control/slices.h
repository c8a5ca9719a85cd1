// Moving between a tensor and its slices along one axis: what Scan and Loop do with their scan
// inputs and outputs. Element types are copied as bytes, so any fixed-size type works.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx::exec::kernels {

// The slice of `t` at `index` along `axis` (already normalized), with that axis removed.
Result<Tensor> SliceAlong(const Tensor& t, int64_t axis, int64_t index);

// Inserts a new axis at `axis` (0..rank of the parts) and lays `parts` along it, last part first
// when `reverse`. All parts must have the same type and shape; `what` names them in errors.
Result<Tensor> StackAlong(std::span<const Tensor> parts, int64_t axis, bool reverse,
                          std::string_view what);

}  // namespace epctx::exec::kernels
