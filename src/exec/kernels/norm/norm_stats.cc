#include "exec/kernels/norm/norm_stats.h"

#include <algorithm>
#include <cmath>

#include "exec/kernels/common/eigen.h"
#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {
// Row sums are vectorized float sums over blocks this long (short enough to stay accurate),
// gathered in double.
constexpr int64_t kBlock = 1024;
}  // namespace

MeanVar MeanAndVariance(const float* x, int64_t n) {
  MeanVar mv;
  if (n == 0) return mv;
  double sum = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    sum += ConstArrayMapF(x + b, std::min(kBlock, n - b)).sum();
  }
  mv.mean = sum / static_cast<double>(n);
  const float mean = static_cast<float>(mv.mean);
  double sq = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    sq += (ConstArrayMapF(x + b, std::min(kBlock, n - b)) - mean).square().sum();
  }
  mv.variance = sq / static_cast<double>(n);
  return mv;
}

double SumOfSquares(const float* x, int64_t n) {
  double sum = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    sum += ConstArrayMapF(x + b, std::min(kBlock, n - b)).square().sum();
  }
  return sum;
}

float InverseRms(const float* x, int64_t n, float epsilon) {
  const double mean_square = SumOfSquares(x, n) / static_cast<double>(n);
  return static_cast<float>(1.0 / std::sqrt(mean_square + static_cast<double>(epsilon)));
}

void ScaleRow(const float* x, float factor, const float* scale, float* y, int64_t n) {
  ArrayMapF(y, n) = ConstArrayMapF(x, n) * factor * ConstArrayMapF(scale, n);
}

void CenterScaleRow(const float* x, float mean, float factor, const float* scale,
                    const float* shift, float* y, int64_t n) {
  if (shift != nullptr) {
    ArrayMapF(y, n) = (ConstArrayMapF(x, n) - mean) * factor * ConstArrayMapF(scale, n) +
                      ConstArrayMapF(shift, n);
  } else {
    ArrayMapF(y, n) = (ConstArrayMapF(x, n) - mean) * factor * ConstArrayMapF(scale, n);
  }
}

void NormalizeChannelGroups(const float* x, int64_t batch, int64_t channels, int64_t groups,
                            int64_t inner, const float* scale, const float* bias, bool per_channel,
                            double epsilon, float* y, int threads) {
  if (groups <= 0) return;  // no channels (instance normalization of an empty tensor)
  // In [N, C, inner] a group's channels are consecutive: a group is one contiguous run.
  const int64_t group_channels = channels / groups;
  const int64_t run = group_channels * inner;
  ParallelForRanges(threads, batch * groups, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* in = x + r * run;
      float* out = y + r * run;
      const MeanVar mv = MeanAndVariance(in, run);
      const double inv_std = 1 / std::sqrt(mv.variance + epsilon);
      const int64_t g = r % groups;
      for (int64_t c = 0; c < group_channels; ++c) {
        const int64_t p = per_channel ? g * group_channels + c : g;
        const float mul = static_cast<float>(scale[p] * inv_std);
        const float add = static_cast<float>(bias[p] - mv.mean * mul);
        const float* in_c = in + c * inner;
        float* out_c = out + c * inner;
        for (int64_t i = 0; i < inner; ++i) out_c[i] = in_c[i] * mul + add;
      }
    }
  });
}

Result<BroadcastRow> BroadcastToRow(const Tensor& t, std::span<const int64_t> row,
                                    std::string_view name) {
  EPCTX_RETURN_IF_ERROR(ExpectDtype(t, DataType::kFloat32, name));
  const std::vector<int64_t>& ts = t.shape();
  BroadcastRow out;
  // Right-aligned numpy broadcast of `ts` to `row`; leading unit dims of `ts` beyond the row's
  // rank are allowed.
  const size_t rank = row.size();
  bool compatible = true;
  for (size_t i = 0; i < ts.size(); ++i) {
    const int64_t d = ts[ts.size() - 1 - i];
    if (i >= rank) {
      compatible = compatible && d == 1;
    } else {
      const int64_t r = row[rank - 1 - i];
      compatible = compatible && (d == r || d == 1);
    }
  }
  if (!compatible) {
    return EPCTX_ERROR(kInvalidArgument, "input {} has shape {}, which does not broadcast to {}",
                       name, ShapeToString(ts), ShapeToString({row.begin(), row.end()}));
  }
  EPCTX_ASSIGN_OR_RETURN(const int64_t count, CheckedDimProduct(row));
  if (t.element_count() == count) {
    out.data = t.data_as<float>();
    return out;
  }
  // Element strides of `t` aligned with `row`, 0 along broadcast dims.
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = 0; i < ts.size() && i < rank; ++i) {
    const size_t td = ts.size() - 1 - i;
    const size_t rd = rank - 1 - i;
    strides[rd] = ts[td] == 1 ? 0 : stride;
    stride *= ts[td];
  }
  out.storage.resize(static_cast<size_t>(count));
  const float* src = t.data_as<float>();
  std::vector<int64_t> index(rank, 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += index[d] * strides[d];
    out.storage[static_cast<size_t>(e)] = src[offset];
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < row[d]) break;
      index[d] = 0;
    }
  }
  out.data = out.storage.data();
  return out;
}

}  // namespace epctx::exec::kernels
