// Statistics and parameter layouts shared by the normalization kernels.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx::exec::kernels {

struct MeanVar {
  double mean = 0;
  double variance = 0;  // population variance (divided by n)
};

// Of `n` floats, with two passes: the one-pass E[x^2] - E[x]^2 loses the variance of rows
// whose mean is large against their spread.
MeanVar MeanAndVariance(const float* x, int64_t n);

// A float32 parameter (LayerNormalization's Scale or B) as one value per element of a row of
// shape `row`: the tensor itself when it already has that many elements in that order, else
// its numpy broadcast to `row`, copied into `storage`.
struct BroadcastRow {
  const float* data = nullptr;
  std::vector<float> storage;
};
Result<BroadcastRow> BroadcastToRow(const Tensor& t, std::span<const int64_t> row,
                                    std::string_view name);

}  // namespace epctx::exec::kernels
