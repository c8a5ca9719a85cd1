#include "exec/kernels/norm/norm_stats.h"

#include <algorithm>
#include <cmath>

#include "exec/kernels/common/eigen.h"
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
