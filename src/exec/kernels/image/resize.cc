// Resize (opsets 10 to 19, without antialias) and Upsample (7, 9): nearest for every fixed-size
// element type, linear and cubic for float32. The output size comes from `sizes`, or from
// floor(in * scale).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/image/resize_geometry.h"
#include "exec/kernels/image/resize_sample.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// Where the op takes its scales or sizes from.
enum class ResizeInputs {
  kScalesAttr,   // Upsample-7: attribute `scales`
  kScalesInput,  // Upsample-9, Resize-10: (X, scales)
  kFull,         // Resize-11+: (X, roi, scales, sizes)
};

Result<std::vector<float>> ReadFloats(const Tensor& t, std::string_view name) {
  if (t.dtype() != DataType::kFloat32) {
    return EPCTX_ERROR(kUnsupported, "input {} has type {}, expected float32", name,
                       DataTypeName(t.dtype()));
  }
  if (t.shape().size() > 1) {
    return EPCTX_ERROR(kInvalidArgument, "input {} has rank {}, expected 1", name,
                       t.shape().size());
  }
  const float* p = t.data_as<float>();
  return std::vector<float>(p, p + t.element_count());
}

Result<std::vector<double>> ReadRoi(const Tensor& t) {
  std::vector<double> roi(static_cast<size_t>(t.element_count()));
  if (t.dtype() == DataType::kFloat32) {
    const float* p = t.data_as<float>();
    roi.assign(p, p + t.element_count());
  } else if (t.dtype() == DataType::kFloat64) {
    const double* p = t.data_as<double>();
    roi.assign(p, p + t.element_count());
  } else {
    return EPCTX_ERROR(kUnsupported, "input roi has type {}, expected float32 or float64",
                       DataTypeName(t.dtype()));
  }
  return roi;
}

// The bytes of `value` as one element of `type`.
Result<uint64_t> ExtrapolationBytes(DataType type, float value) {
  uint64_t bits = 0;
  auto put = [&bits](auto v) { std::memcpy(&bits, &v, sizeof(v)); };
  switch (type) {
    case DataType::kFloat32:
      put(value);
      break;
    case DataType::kFloat64:
      put(static_cast<double>(value));
      break;
    case DataType::kInt8:
      put(static_cast<int8_t>(value));
      break;
    case DataType::kUint8:
      put(static_cast<uint8_t>(value));
      break;
    case DataType::kInt16:
      put(static_cast<int16_t>(value));
      break;
    case DataType::kUint16:
      put(static_cast<uint16_t>(value));
      break;
    case DataType::kInt32:
      put(static_cast<int32_t>(value));
      break;
    case DataType::kUint32:
      put(static_cast<uint32_t>(value));
      break;
    case DataType::kInt64:
      put(static_cast<int64_t>(value));
      break;
    case DataType::kUint64:
      put(static_cast<uint64_t>(value));
      break;
    case DataType::kBool:
      put(static_cast<uint8_t>(value != 0));
      break;
    default:
      if (value != 0.0f) {
        return EPCTX_ERROR(kUnsupported, "extrapolation_value on type {} is not supported",
                           DataTypeName(type));
      }
  }
  return bits;
}

class ResizeKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, ResizeInputs inputs) {
    auto kernel = std::unique_ptr<ResizeKernel>(new ResizeKernel());
    kernel->inputs_ = inputs;
    if (inputs == ResizeInputs::kFull) {
      EPCTX_ASSIGN_OR_RETURN(kernel->attrs_, ParseResizeAttrs(*node.attrs));
      EPCTX_ASSIGN_OR_RETURN(kernel->axes_, node.attrs->GetInts("axes"));
    } else {
      EPCTX_ASSIGN_OR_RETURN(kernel->attrs_, ParseLegacyResizeAttrs(*node.attrs));
    }
    if (inputs == ResizeInputs::kScalesAttr) {
      EPCTX_ASSIGN_OR_RETURN(const AttributeValue* scales,
                             node.attrs->Require("scales", AttrType::kFloats));
      kernel->attr_scales_.assign(scales->floats.begin(), scales->floats.end());
    }
    if (kernel->attrs_.mode != ResizeMode::kNearest) {
      EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "X"));
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    const std::vector<int64_t>& xs = x->shape();
    const size_t rank = xs.size();
    if (rank == 0) return EPCTX_ERROR(kInvalidArgument, "input X is a scalar, expected rank >= 1");
    if (attrs_.mode != ResizeMode::kNearest) {
      EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    }
    EPCTX_ASSIGN_OR_RETURN(size_t element_size, CopyableElementSize(x->dtype(), "X"));

    std::vector<int64_t> out_shape(rank);
    std::vector<double> scales(rank);
    std::vector<double> roi;
    EPCTX_RETURN_IF_ERROR(OutputGeometry(ctx, xs, out_shape, scales, roi));

    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), out_shape));
    if (y->element_count() == 0) return Status::Ok();
    if (x->element_count() == 0) {
      return EPCTX_ERROR(kInvalidArgument, "input X of shape {} is empty, output {} is not",
                         ShapeToString(xs), ShapeToString(out_shape));
    }
    // After the allocation, which has checked that the output size is sane.
    std::vector<AxisTaps> taps(rank);
    for (size_t d = 0; d < rank; ++d) {
      const double start = roi.empty() ? 0.0 : roi[d];
      const double end = roi.empty() ? 1.0 : roi[rank + d];
      taps[d] = ComputeAxisTaps(attrs_, xs[d], out_shape[d], scales[d], start, end);
    }
    if (attrs_.mode == ResizeMode::kNearest) {
      EPCTX_ASSIGN_OR_RETURN(uint64_t extrapolation,
                             ExtrapolationBytes(x->dtype(), attrs_.extrapolation));
      ResizeNearest(x->data(), xs, taps, element_size, &extrapolation, y->mutable_data(),
                    ctx.num_threads());
    } else {
      EPCTX_RETURN_IF_ERROR(ResizeSeparableF32(x->data_as<float>(), xs, taps, attrs_.extrapolation,
                                               y->mutable_data_as<float>(), ctx.num_threads()));
    }
    return Status::Ok();
  }

 private:
  ResizeKernel() = default;

  // The output shape, the per-axis scale out/in and (tf_crop_and_resize) the roi.
  Status OutputGeometry(const KernelContext& ctx, const std::vector<int64_t>& xs,
                        std::vector<int64_t>& out_shape, std::vector<double>& scales,
                        std::vector<double>& roi) const {
    const size_t rank = xs.size();
    std::vector<float> given_scales;
    std::vector<int64_t> sizes;
    if (inputs_ == ResizeInputs::kScalesAttr) {
      given_scales = attr_scales_;
    } else if (inputs_ == ResizeInputs::kScalesInput) {
      EPCTX_ASSIGN_OR_RETURN(const Tensor* s, RequiredInput(ctx, 1, "scales"));
      EPCTX_ASSIGN_OR_RETURN(given_scales, ReadFloats(*s, "scales"));
    } else {
      const Tensor* s = ctx.input(2);
      const Tensor* z = ctx.input(3);
      if (z != nullptr && z->element_count() > 0) {
        if (s != nullptr && s->element_count() > 0) {
          return EPCTX_ERROR(kInvalidArgument, "only one of scales and sizes may be given");
        }
        EPCTX_ASSIGN_OR_RETURN(sizes, ReadIndexVector(*z, "sizes"));
      } else if (s != nullptr && s->element_count() > 0) {
        EPCTX_ASSIGN_OR_RETURN(given_scales, ReadFloats(*s, "scales"));
      } else {
        return EPCTX_ERROR(kInvalidArgument, "neither scales nor sizes is given");
      }
      const Tensor* r = ctx.input(1);
      if (attrs_.coord == CoordMode::kTfCropAndResize) {
        if (r == nullptr || r->element_count() == 0) {
          return EPCTX_ERROR(kInvalidArgument, "tf_crop_and_resize needs input roi");
        }
        EPCTX_ASSIGN_OR_RETURN(roi, ReadRoi(*r));
      }
    }
    // From opset 18 `axes` names the dims that scales, sizes and roi describe; the others keep
    // their extent.
    std::vector<size_t> axes(rank);
    for (size_t d = 0; d < rank; ++d) axes[d] = d;
    if (!axes_.empty()) {
      axes.clear();
      for (int64_t a : axes_) {
        EPCTX_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a, static_cast<int64_t>(rank), "axes"));
        axes.push_back(static_cast<size_t>(axis));
      }
    }
    const size_t n = axes.size();
    out_shape = xs;
    std::fill(scales.begin(), scales.end(), 1.0);
    if (!roi.empty()) {
      if (roi.size() != 2 * n) {
        return EPCTX_ERROR(kInvalidArgument, "roi has {} values, expected {}", roi.size(), 2 * n);
      }
      std::vector<double> full(2 * rank);
      for (size_t d = 0; d < rank; ++d) full[rank + d] = 1.0;
      for (size_t i = 0; i < n; ++i) {
        full[axes[i]] = roi[i];
        full[rank + axes[i]] = roi[n + i];
      }
      roi = std::move(full);
    }
    if (!sizes.empty()) {
      if (sizes.size() != n) {
        return EPCTX_ERROR(kInvalidArgument, "sizes has {} values, expected {}", sizes.size(), n);
      }
      for (size_t i = 0; i < n; ++i) {
        if (sizes[i] < 0) {
          return EPCTX_ERROR(kInvalidArgument, "sizes[{}] is {}, expected >= 0", i, sizes[i]);
        }
      }
      if (attrs_.aspect != ResizeAttrs::AspectPolicy::kStretch) {
        // One scale for every axis: the largest that fits inside `sizes` (not_larger) or the
        // smallest that covers it (not_smaller).
        const bool not_larger = attrs_.aspect == ResizeAttrs::AspectPolicy::kNotLarger;
        double scale = not_larger ? HUGE_VAL : 0.0;
        for (size_t i = 0; i < n; ++i) {
          const double si = xs[axes[i]] > 0
                                ? static_cast<double>(sizes[i]) / static_cast<double>(xs[axes[i]])
                                : 1.0;
          scale = not_larger ? std::min(scale, si) : std::max(scale, si);
        }
        for (size_t i = 0; i < n; ++i) {
          scales[axes[i]] = scale;
          out_shape[axes[i]] =
              static_cast<int64_t>(std::floor(scale * static_cast<double>(xs[axes[i]]) + 0.5));
        }
        return Status::Ok();
      }
      for (size_t i = 0; i < n; ++i) {
        const size_t d = axes[i];
        out_shape[d] = sizes[i];
        scales[d] = xs[d] > 0 ? static_cast<double>(sizes[i]) / static_cast<double>(xs[d]) : 1.0;
      }
      return Status::Ok();
    }
    if (given_scales.size() != n) {
      return EPCTX_ERROR(kInvalidArgument, "scales has {} values, expected {}{}",
                         given_scales.size(), n, axes_.empty() ? " (the rank of X)" : "");
    }
    for (size_t i = 0; i < n; ++i) {
      const double s = given_scales[i];
      if (!(s > 0) || !std::isfinite(s)) {
        return EPCTX_ERROR(kInvalidArgument, "scales[{}] is {}, expected > 0", i, s);
      }
      const size_t d = axes[i];
      const double out = std::floor(s * static_cast<double>(xs[d]));
      if (out > static_cast<double>(int64_t{1} << 40)) {
        return EPCTX_ERROR(kInvalidArgument, "scales[{}] = {} makes the output too large", i, s);
      }
      out_shape[d] = static_cast<int64_t>(out);
      scales[d] = s;
    }
    return Status::Ok();
  }

  ResizeInputs inputs_ = ResizeInputs::kFull;
  ResizeAttrs attrs_;
  std::vector<int64_t> axes_;  // opset 18; empty: all axes
  std::vector<float> attr_scales_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateUpsample(const NodeInfo& node) {
  return ResizeKernel::Create(
      node, node.opset >= 9 ? ResizeInputs::kScalesInput : ResizeInputs::kScalesAttr);
}

Result<std::unique_ptr<Kernel>> CreateResize(const NodeInfo& node) {
  return ResizeKernel::Create(node,
                              node.opset >= 11 ? ResizeInputs::kFull : ResizeInputs::kScalesInput);
}

}  // namespace epctx::exec::kernels
