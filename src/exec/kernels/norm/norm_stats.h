// Statistics, parameter layouts and row steps shared by the normalization kernels.
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

// Sum of x[i]^2 over `n` floats (RMS normalization's statistic), vectorized in float over
// blocks and gathered in double like MeanAndVariance.
double SumOfSquares(const float* x, int64_t n);

// 1 / sqrt(mean(x^2) + epsilon) of `n` floats: the RMS normalizations' per-row factor.
float InverseRms(const float* x, int64_t n, float epsilon);

// y[i] = x[i] * factor * scale[i] for i < n (x may equal y).
void ScaleRow(const float* x, float factor, const float* scale, float* y, int64_t n);
// y[i] = (x[i] - mean) * factor * scale[i] (+ shift[i] when not null) for i < n (x may equal y).
void CenterScaleRow(const float* x, float mean, float factor, const float* scale,
                    const float* shift, float* y, int64_t n);

// InstanceNormalization and GroupNormalization: x [batch, channels, inner] in `groups` groups of
// channels / groups consecutive channels (the caller checked that they divide); each group of
// each sample normalized over its channels x inner elements, then y = normalized * scale + bias,
// with one scale and bias per channel (`per_channel`) or per group. Parallel over the groups.
void NormalizeChannelGroups(const float* x, int64_t batch, int64_t channels, int64_t groups,
                            int64_t inner, const float* scale, const float* bias, bool per_channel,
                            double epsilon, float* y, int threads);

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
