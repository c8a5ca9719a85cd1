// Registration functions of the signal files, called by RegisterSignalKernels, and the input
// readers they share.
#pragma once

#include <cstdint>
#include <string_view>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/kernel.h"

namespace epctx::exec::kernels {

void RegisterDft(KernelRegistry& registry);              // dft.cc
void RegisterStft(KernelRegistry& registry);             // stft.cc
void RegisterMelWeightMatrix(KernelRegistry& registry);  // mel_weight_matrix.cc

// The value of an int32 or int64 input holding one element (rank 0, or rank 1 of size 1).
Result<int64_t> ReadIntScalar(const Tensor& t, std::string_view name);
// The value of a float32 or float64 input holding one element, as double.
Result<double> ReadFloatScalar(const Tensor& t, std::string_view name);

}  // namespace epctx::exec::kernels
