// Readers of the scalar inputs the signal kernels share (scalar_input.cc).
#pragma once

#include <cstdint>
#include <string_view>

#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx::exec::kernels {

// The value of an int32 or int64 input holding one element (rank 0, or rank 1 of size 1).
Result<int64_t> ReadIntScalar(const Tensor& t, std::string_view name);
// The value of a float32 or float64 input holding one element, as double.
Result<double> ReadFloatScalar(const Tensor& t, std::string_view name);

}  // namespace epctx::exec::kernels
