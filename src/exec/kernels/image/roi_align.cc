// RoiAlign: for each region of interest (x1, y1, x2, y2 in input coordinates times
// spatial_scale), an output_height x output_width grid of bins, each the average (or maximum) of
// bilinear samples on a regular sub-grid, following ONNX Runtime (including its `max` mode,
// which takes the largest weighted corner). Opset 10 behaves as output_half_pixel. float32.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// One bilinear sample: four input offsets and weights (all zero outside the input).
struct SamplePoint {
  int64_t offset[4] = {0, 0, 0, 0};
  float weight[4] = {0, 0, 0, 0};
};

SamplePoint BilinearPoint(float y, float x, int64_t height, int64_t width) {
  SamplePoint p;
  // Written so that NaN coordinates also count as outside.
  if (!(y >= -1.0f && y <= static_cast<float>(height) && x >= -1.0f &&
        x <= static_cast<float>(width))) {
    return p;
  }
  y = std::max(y, 0.0f);
  x = std::max(x, 0.0f);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
  if (y0 >= height - 1) {
    y0 = y1 = height - 1;
    y = static_cast<float>(y0);
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= width - 1) {
    x0 = x1 = width - 1;
    x = static_cast<float>(x0);
  } else {
    x1 = x0 + 1;
  }
  const float ly = y - static_cast<float>(y0), lx = x - static_cast<float>(x0);
  const float hy = 1 - ly, hx = 1 - lx;
  p.offset[0] = y0 * width + x0;
  p.offset[1] = y0 * width + x1;
  p.offset[2] = y1 * width + x0;
  p.offset[3] = y1 * width + x1;
  p.weight[0] = hy * hx;
  p.weight[1] = hy * lx;
  p.weight[2] = ly * hx;
  p.weight[3] = ly * lx;
  return p;
}

class RoiAlignKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool half_pixel_default) {
    auto kernel = std::unique_ptr<RoiAlignKernel>(new RoiAlignKernel());
    EPCTX_ASSIGN_OR_RETURN(std::string mode, node.attrs->GetString("mode", "avg"));
    if (mode != "avg" && mode != "max") {
      return EPCTX_ERROR(kInvalidArgument, "mode '{}' is not avg or max", mode);
    }
    kernel->max_ = mode == "max";
    EPCTX_ASSIGN_OR_RETURN(kernel->out_h_, node.attrs->GetInt("output_height", 1));
    EPCTX_ASSIGN_OR_RETURN(kernel->out_w_, node.attrs->GetInt("output_width", 1));
    EPCTX_ASSIGN_OR_RETURN(kernel->sampling_ratio_, node.attrs->GetInt("sampling_ratio", 0));
    EPCTX_ASSIGN_OR_RETURN(kernel->spatial_scale_, node.attrs->GetFloat("spatial_scale", 1.0f));
    if (kernel->out_h_ < 1 || kernel->out_w_ < 1 || kernel->sampling_ratio_ < 0) {
      return EPCTX_ERROR(kInvalidArgument,
                         "output_height {}, output_width {} and sampling_ratio {} must be "
                         "positive (sampling_ratio may be 0)",
                         kernel->out_h_, kernel->out_w_, kernel->sampling_ratio_);
    }
    EPCTX_ASSIGN_OR_RETURN(
        std::string coord,
        node.attrs->GetString("coordinate_transformation_mode",
                              half_pixel_default ? "half_pixel" : "output_half_pixel"));
    if (coord != "half_pixel" && coord != "output_half_pixel") {
      return EPCTX_ERROR(kInvalidArgument,
                         "coordinate_transformation_mode '{}' is not half_pixel or "
                         "output_half_pixel",
                         coord);
    }
    kernel->half_pixel_ = coord == "half_pixel";
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "rois"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* rois, RequiredInput(ctx, 1, "rois"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 2, "batch_indices"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*rois, DataType::kFloat32, "rois"));
    EPCTX_RETURN_IF_ERROR(ExpectRank(*x, 4, "X"));
    const std::vector<int64_t>& xs = x->shape();
    const int64_t batch = xs[0], channels = xs[1], height = xs[2], width = xs[3];
    const std::vector<int64_t>& rs = rois->shape();
    if (rs.size() != 2 || rs[1] != 4) {
      return EPCTX_ERROR(kInvalidArgument, "input rois has shape {}, expected [num_rois, 4]",
                         ShapeToString(rs));
    }
    const int64_t num_rois = rs[0];
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> batch_of,
                           ReadIndexVector(*indices, "batch_indices"));
    if (batch_of.size() != static_cast<size_t>(num_rois)) {
      return EPCTX_ERROR(kInvalidArgument, "input batch_indices has {} values, expected {}",
                         batch_of.size(), num_rois);
    }
    for (int64_t b : batch_of) {
      if (b < 0 || b >= batch) {
        return EPCTX_ERROR(kInvalidArgument, "batch index {} is outside [0, {})", b, batch);
      }
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32,
                                                          {num_rois, channels, out_h_, out_w_}));
    const float* xp = x->data_as<float>();
    const float* rp = rois->data_as<float>();
    float* yp = y->mutable_data_as<float>();
    if (height == 0 || width == 0) {
      std::fill(yp, yp + y->element_count(), 0.0f);
      return Status::Ok();
    }
    std::vector<std::vector<SamplePoint>> roi_points(static_cast<size_t>(num_rois));
    for (int64_t r = 0; r < num_rois; ++r) {
      EPCTX_ASSIGN_OR_RETURN(roi_points[static_cast<size_t>(r)],
                             RoiPoints(rp + r * 4, height, width));
    }
    const int nt = ThreadsFor(ctx.num_threads(), y->element_count() * 16);
    ParallelFor(nt, num_rois, [&](int64_t r, int) {
      const std::vector<SamplePoint>& points = roi_points[static_cast<size_t>(r)];
      const int64_t per_bin = static_cast<int64_t>(points.size()) / (out_h_ * out_w_);
      const float count = static_cast<float>(std::max<int64_t>(per_bin, 1));
      for (int64_t c = 0; c < channels; ++c) {
        const float* plane =
            xp + (batch_of[static_cast<size_t>(r)] * channels + c) * height * width;
        float* out = yp + (r * channels + c) * out_h_ * out_w_;
        for (int64_t bin = 0; bin < out_h_ * out_w_; ++bin) {
          float acc = max_ ? -std::numeric_limits<float>::infinity() : 0.0f;
          for (int64_t s = 0; s < per_bin; ++s) {
            const SamplePoint& p = points[static_cast<size_t>(bin * per_bin + s)];
            if (max_) {
              for (int k = 0; k < 4; ++k) acc = std::max(acc, p.weight[k] * plane[p.offset[k]]);
            } else {
              for (int k = 0; k < 4; ++k) acc += p.weight[k] * plane[p.offset[k]];
            }
          }
          out[bin] = max_ ? (per_bin > 0 ? acc : 0.0f) : acc / count;
        }
      }
    });
    return Status::Ok();
  }

 private:
  RoiAlignKernel() = default;

  // The sample points of every bin of one roi, bin-major.
  Result<std::vector<SamplePoint>> RoiPoints(const float* roi, int64_t height,
                                             int64_t width) const {
    const float offset = half_pixel_ ? 0.5f : 0.0f;
    const float x1 = roi[0] * spatial_scale_ - offset, y1 = roi[1] * spatial_scale_ - offset;
    const float x2 = roi[2] * spatial_scale_ - offset, y2 = roi[3] * spatial_scale_ - offset;
    float roi_w = x2 - x1, roi_h = y2 - y1;
    if (!half_pixel_) {
      // The legacy mode makes every roi at least one pixel wide.
      roi_w = std::max(roi_w, 1.0f);
      roi_h = std::max(roi_h, 1.0f);
    }
    const float bin_h = roi_h / static_cast<float>(out_h_);
    const float bin_w = roi_w / static_cast<float>(out_w_);
    // An roi far larger than the input would ask for an unbounded number of samples.
    constexpr int64_t kMaxSamples = int64_t{1} << 24;
    auto grid = [&](float extent, int64_t bins) -> int64_t {
      if (sampling_ratio_ > 0) return sampling_ratio_;
      const float g = std::ceil(extent / static_cast<float>(bins));
      if (!(g > 0)) return 0;  // empty, or NaN coordinates
      return g > static_cast<float>(kMaxSamples) ? kMaxSamples + 1 : static_cast<int64_t>(g);
    };
    const int64_t grid_h = grid(roi_h, out_h_);
    const int64_t grid_w = grid(roi_w, out_w_);
    std::vector<SamplePoint> points;
    if (grid_h == 0 || grid_w == 0) return points;
    if (grid_h > kMaxSamples || grid_w > kMaxSamples ||
        grid_h * grid_w > kMaxSamples / (out_h_ * out_w_)) {
      return EPCTX_ERROR(kInvalidArgument, "roi ({}, {}, {}, {}) needs {}x{} samples per bin",
                         roi[0], roi[1], roi[2], roi[3], grid_h, grid_w);
    }
    points.reserve(static_cast<size_t>(out_h_ * out_w_ * grid_h * grid_w));
    for (int64_t ph = 0; ph < out_h_; ++ph) {
      for (int64_t pw = 0; pw < out_w_; ++pw) {
        for (int64_t iy = 0; iy < grid_h; ++iy) {
          const float yy = y1 + static_cast<float>(ph) * bin_h +
                           (static_cast<float>(iy) + 0.5f) * bin_h / static_cast<float>(grid_h);
          for (int64_t ix = 0; ix < grid_w; ++ix) {
            const float xx = x1 + static_cast<float>(pw) * bin_w +
                             (static_cast<float>(ix) + 0.5f) * bin_w / static_cast<float>(grid_w);
            points.push_back(BilinearPoint(yy, xx, height, width));
          }
        }
      }
    }
    return points;
  }

  bool max_ = false;
  int64_t out_h_ = 1, out_w_ = 1, sampling_ratio_ = 0;
  float spatial_scale_ = 1.0f;
  bool half_pixel_ = true;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateRoiAlign(const NodeInfo& node) {
  return RoiAlignKernel::Create(node, node.opset >= 16);
}

}  // namespace epctx::exec::kernels
