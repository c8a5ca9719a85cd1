// MaxPool (with its optional Indices output) and AveragePool over 1 to 3 spatial dims. Both take
// float32 and float64; MaxPool also int8 and uint8 (opset 12).
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/nn/window.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

enum class PoolKind { kMax, kAverage };

// For every output index along one axis: the kernel taps [lo, hi) that land inside the input,
// and how many land inside the padded input (AveragePool's count_include_pad divisor).
struct AxisTaps {
  std::vector<int64_t> lo, hi, padded;
};

AxisTaps TapsOf(const Window3d& w, int axis) {
  AxisTaps t;
  const int64_t out = w.out[axis], k = w.kernel[axis], s = w.stride[axis], d = w.dilation[axis];
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * s - w.pad_begin[axis];
    const int64_t lo = std::min(k, FirstInside(start, d, 0));
    const int64_t hi = std::max(lo, std::min(k, EndInside(start, d, w.in[axis])));
    const int64_t plo = std::min(k, FirstInside(start, d, -w.pad_begin[axis]));
    const int64_t phi =
        std::max(plo, std::min(k, EndInside(start, d, w.in[axis] + w.pad_end[axis])));
    t.lo.push_back(lo);
    t.hi.push_back(hi);
    t.padded.push_back(phi - plo);
  }
  return t;
}

// The start of a maximum: below every value of T.
template <typename T>
constexpr T MaxIdentity() {
  if constexpr (std::numeric_limits<T>::has_infinity) {
    return -std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

template <PoolKind kKind, typename T>
void PoolPlane(const Window3d& w, const std::array<AxisTaps, 3>& taps, bool count_include_pad,
               const T* x, T* y) {
  for (int64_t od = 0; od < w.out[0]; ++od) {
    for (int64_t oh = 0; oh < w.out[1]; ++oh) {
      for (int64_t ow = 0; ow < w.out[2]; ++ow) {
        const int64_t o[3] = {od, oh, ow};
        int64_t first[3];
        for (int a = 0; a < 3; ++a) first[a] = o[a] * w.stride[a] - w.pad_begin[a];
        T acc = kKind == PoolKind::kMax ? MaxIdentity<T>() : T{0};
        for (int64_t kd = taps[0].lo[od]; kd < taps[0].hi[od]; ++kd) {
          const int64_t id = first[0] + kd * w.dilation[0];
          for (int64_t kh = taps[1].lo[oh]; kh < taps[1].hi[oh]; ++kh) {
            const T* xr = x + (id * w.in[1] + first[1] + kh * w.dilation[1]) * w.in[2];
            for (int64_t kw = taps[2].lo[ow]; kw < taps[2].hi[ow]; ++kw) {
              const T v = xr[first[2] + kw * w.dilation[2]];
              if constexpr (kKind == PoolKind::kMax) {
                acc = std::max(acc, v);
              } else {
                acc += v;
              }
            }
          }
        }
        if constexpr (kKind == PoolKind::kAverage) {
          int64_t count = 1;
          for (int a = 0; a < 3; ++a) {
            const AxisTaps& t = taps[a];
            count *= count_include_pad ? t.padded[o[a]] : t.hi[o[a]] - t.lo[o[a]];
          }
          acc = count > 0 ? acc / static_cast<T>(count) : T{0};
        }
        y[(od * w.out[1] + oh) * w.out[2] + ow] = acc;
      }
    }
  }
}

// MaxPool with output Indices: the flat index into X of each maximum (the first one on ties),
// the spatial part in row-major order (storage_order 0) or column-major order (1).
template <typename T>
void MaxPoolPlaneWithIndices(const Window3d& w, const std::array<AxisTaps, 3>& taps,
                             bool column_major, int64_t plane, const T* x, T* y, int64_t* indices) {
  const std::array<int64_t, 3> col_strides{1, w.in[0], w.in[0] * w.in[1]};
  for (int64_t od = 0; od < w.out[0]; ++od) {
    for (int64_t oh = 0; oh < w.out[1]; ++oh) {
      for (int64_t ow = 0; ow < w.out[2]; ++ow) {
        const int64_t o[3] = {od, oh, ow};
        int64_t first[3];
        for (int a = 0; a < 3; ++a) first[a] = o[a] * w.stride[a] - w.pad_begin[a];
        T best = MaxIdentity<T>();
        int64_t at[3] = {-1, -1, -1};
        for (int64_t kd = taps[0].lo[od]; kd < taps[0].hi[od]; ++kd) {
          const int64_t id = first[0] + kd * w.dilation[0];
          for (int64_t kh = taps[1].lo[oh]; kh < taps[1].hi[oh]; ++kh) {
            const int64_t ih = first[1] + kh * w.dilation[1];
            const T* xr = x + (id * w.in[1] + ih) * w.in[2];
            for (int64_t kw = taps[2].lo[ow]; kw < taps[2].hi[ow]; ++kw) {
              const int64_t iw = first[2] + kw * w.dilation[2];
              if (xr[iw] > best || at[0] < 0) {
                best = xr[iw];
                at[0] = id;
                at[1] = ih;
                at[2] = iw;
              }
            }
          }
        }
        const int64_t out = (od * w.out[1] + oh) * w.out[2] + ow;
        y[out] = best;
        if (at[0] < 0) {
          indices[out] = plane * w.in_size();  // a window of padding only
        } else if (column_major) {
          indices[out] = plane * w.in_size() + at[0] * col_strides[0] + at[1] * col_strides[1] +
                         at[2] * col_strides[2];
        } else {
          indices[out] = plane * w.in_size() + (at[0] * w.in[1] + at[1]) * w.in[2] + at[2];
        }
      }
    }
  }
}

class PoolKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, PoolKind kind) {
    auto kernel = std::unique_ptr<PoolKernel>(new PoolKernel());
    kernel->kind_ = kind;
    EPCTX_ASSIGN_OR_RETURN(kernel->window_, ParseWindowAttrs(*node.attrs));
    EPCTX_RETURN_IF_ERROR(node.attrs->Require("kernel_shape", AttrType::kInts).status());
    EPCTX_RETURN_IF_ERROR(
        ValidateWindowAttrs(kernel->window_, kernel->window_.kernel_shape.size()));
    EPCTX_ASSIGN_OR_RETURN(int64_t include_pad, node.attrs->GetInt("count_include_pad", 0));
    kernel->count_include_pad_ = include_pad != 0;
    kernel->indices_output_ = kind == PoolKind::kMax && OutputPresent(node, 1);
    EPCTX_ASSIGN_OR_RETURN(int64_t storage_order, node.attrs->GetInt("storage_order", 0));
    if (storage_order != 0 && storage_order != 1) {
      return EPCTX_ERROR(kInvalidArgument, "storage_order is {}, expected 0 or 1", storage_order);
    }
    kernel->column_major_ = storage_order == 1;
    if (!node.inputs.empty() && node.inputs[0].dtype != DataType::kUndefined) {
      EPCTX_RETURN_IF_ERROR(CheckType(kind, node.inputs[0].dtype));
    }
    EPCTX_RETURN_IF_ERROR(ExpectStaticRank(node, 0, kernel->window_.kernel_shape.size() + 2, "X"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_RETURN_IF_ERROR(CheckType(kind_, x->dtype()));
    switch (x->dtype()) {
      case DataType::kFloat64:
        return RunTyped<double>(ctx, *x);
      case DataType::kInt8:
        return RunTyped<int8_t>(ctx, *x);
      case DataType::kUint8:
        return RunTyped<uint8_t>(ctx, *x);
      default:
        return RunTyped<float>(ctx, *x);
    }
  }

 private:
  PoolKernel() = default;

  static Status CheckType(PoolKind kind, DataType t) {
    const bool floating = t == DataType::kFloat32 || t == DataType::kFloat64;
    const bool max_only = t == DataType::kInt8 || t == DataType::kUint8;
    if (floating || (max_only && kind == PoolKind::kMax)) return Status::Ok();
    return EPCTX_ERROR(
        kUnsupported, "input X has type {}, expected {}", DataTypeName(t),
        kind == PoolKind::kMax ? "float32, float64, int8 or uint8" : "float32 or float64");
  }

  template <typename T>
  Status RunTyped(KernelContext& ctx, const Tensor& x) {
    const size_t spatial = window_.kernel_shape.size();
    EPCTX_RETURN_IF_ERROR(ExpectRank(x, spatial + 2, "X"));
    const std::vector<int64_t>& xs = x.shape();
    EPCTX_ASSIGN_OR_RETURN(Window3d w,
                           ResolveWindow(window_, {xs.data() + 2, spatial}, window_.kernel_shape));
    std::vector<int64_t> y_shape{xs[0], xs[1]};
    y_shape.insert(y_shape.end(), w.out_spatial.begin(), w.out_spatial.end());
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.dtype(), y_shape));
    const std::array<AxisTaps, 3> taps{TapsOf(w, 0), TapsOf(w, 1), TapsOf(w, 2)};
    EPCTX_ASSIGN_OR_RETURN(const int64_t planes, CheckedDimProduct(xs, 0, 2));
    const T* xp = x.data_as<T>();
    T* yp = y->mutable_data_as<T>();
    const int64_t work = y->element_count() * w.kernel_size();
    const int nt = ThreadsFor(ctx.num_threads(), work);
    const bool include_pad = count_include_pad_;
    if (indices_output_) {
      EPCTX_ASSIGN_OR_RETURN(Tensor * indices, ctx.AllocateOutput(1, DataType::kInt64, y_shape));
      int64_t* ip = indices->mutable_data_as<int64_t>();
      const bool column_major = column_major_;
      ParallelForRanges(nt, planes, 1, [&](int64_t first, int64_t last) {
        for (int64_t plane = first; plane < last; ++plane) {
          MaxPoolPlaneWithIndices<T>(w, taps, column_major, plane, xp + plane * w.in_size(),
                                     yp + plane * w.out_size(), ip + plane * w.out_size());
        }
      });
      return Status::Ok();
    }
    ParallelForRanges(nt, planes, 1, [&](int64_t first, int64_t last) {
      for (int64_t plane = first; plane < last; ++plane) {
        const T* in = xp + plane * w.in_size();
        T* out = yp + plane * w.out_size();
        if (kind_ == PoolKind::kMax) {
          PoolPlane<PoolKind::kMax, T>(w, taps, include_pad, in, out);
        } else if constexpr (std::is_floating_point_v<T>) {
          PoolPlane<PoolKind::kAverage, T>(w, taps, include_pad, in, out);
        }
      }
    });
    return Status::Ok();
  }

  PoolKind kind_ = PoolKind::kMax;
  WindowAttrs window_;
  bool count_include_pad_ = false;
  bool indices_output_ = false;  // MaxPool's output 1
  bool column_major_ = false;    // storage_order 1
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateMaxPool(const NodeInfo& node) {
  return PoolKernel::Create(node, PoolKind::kMax);
}

Result<std::unique_ptr<Kernel>> CreateAveragePool(const NodeInfo& node) {
  return PoolKernel::Create(node, PoolKind::kAverage);
}

}  // namespace epctx::exec::kernels
