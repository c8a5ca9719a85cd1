// GridSample (opset 16, 4-D): output[n, c, h, w] samples X[n, c] at the normalized location
// grid[n, h, w] = (x, y) in [-1, 1], with bilinear, nearest or bicubic interpolation and zeros,
// border or reflection padding, as PyTorch's grid_sample computes it. float32.
#include <algorithm>
#include <cmath>
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

enum class SampleMode { kBilinear, kNearest, kBicubic };
enum class PaddingMode { kZeros, kBorder, kReflection };

struct Sampler {
  SampleMode mode = SampleMode::kBilinear;
  PaddingMode padding = PaddingMode::kZeros;
  bool align_corners = false;

  float Unnormalize(float g, int64_t size) const {
    const float s = static_cast<float>(size);
    return align_corners ? (g + 1.0f) / 2.0f * (s - 1.0f) : ((g + 1.0f) * s - 1.0f) / 2.0f;
  }

  // Folds `x` into [lo, hi] (given doubled, as PyTorch does) by reflection.
  static float Reflect(float x, float twice_lo, float twice_hi) {
    if (twice_lo == twice_hi) return 0.0f;
    const float lo = twice_lo / 2.0f;
    const float span = (twice_hi - twice_lo) / 2.0f;
    x = std::fabs(x - lo);
    const float extra = std::fmod(x, span);
    const float flips = std::floor(x / span);
    return std::fmod(flips, 2.0f) == 0.0f ? extra + lo : span - extra + lo;
  }

  // The padding mode applied to a coordinate: border clamps, reflection folds then clamps.
  float Pad(float x, int64_t size) const {
    const float last = static_cast<float>(size - 1);
    if (padding == PaddingMode::kBorder) return std::clamp(x, 0.0f, last);
    if (padding == PaddingMode::kReflection) {
      x = align_corners ? Reflect(x, 0.0f, 2.0f * last)
                        : Reflect(x, -1.0f, 2.0f * static_cast<float>(size) - 1.0f);
      return std::clamp(x, 0.0f, last);
    }
    return x;
  }

  // Coordinates far outside (or NaN, from a NaN grid) become -1, which reads as padding.
  static int64_t ToIndex(float v) { return v > -1e9f && v < 1e9f ? static_cast<int64_t>(v) : -1; }

  static float At(const float* plane, int64_t h, int64_t w, int64_t y, int64_t x) {
    return y >= 0 && y < h && x >= 0 && x < w ? plane[y * w + x] : 0.0f;
  }

  static void CubicWeights(float t, float* c) {
    constexpr float a = -0.75f;
    const float t1 = t + 1, s = 1 - t, s1 = s + 1;
    c[0] = ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a;
    c[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
    c[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
    c[3] = ((a * s1 - 5 * a) * s1 + 8 * a) * s1 - 4 * a;
  }

  float Sample(const float* plane, int64_t h, int64_t w, float gx, float gy) const {
    float x = Unnormalize(gx, w);
    float y = Unnormalize(gy, h);
    if (mode == SampleMode::kBicubic) {
      // The padding applies to each tap rather than to the sampling point.
      const float fx = std::floor(x), fy = std::floor(y);
      float cx[4], cy[4];
      CubicWeights(x - fx, cx);
      CubicWeights(y - fy, cy);
      float acc = 0;
      for (int i = 0; i < 4; ++i) {
        const int64_t ty = ToIndex(Pad(fy - 1 + static_cast<float>(i), h));
        float row = 0;
        for (int j = 0; j < 4; ++j) {
          const int64_t tx = ToIndex(Pad(fx - 1 + static_cast<float>(j), w));
          row += cx[j] * At(plane, h, w, ty, tx);
        }
        acc += cy[i] * row;
      }
      return acc;
    }
    x = Pad(x, w);
    y = Pad(y, h);
    if (mode == SampleMode::kNearest) {
      return At(plane, h, w, ToIndex(std::nearbyint(y)), ToIndex(std::nearbyint(x)));
    }
    const float x0 = std::floor(x), y0 = std::floor(y);
    const float lx = x - x0, ly = y - y0;
    const int64_t ix = ToIndex(x0), iy = ToIndex(y0);
    return (1 - ly) * ((1 - lx) * At(plane, h, w, iy, ix) + lx * At(plane, h, w, iy, ix + 1)) +
           ly * ((1 - lx) * At(plane, h, w, iy + 1, ix) + lx * At(plane, h, w, iy + 1, ix + 1));
  }
};

class GridSampleKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<GridSampleKernel>(new GridSampleKernel());
    Sampler& s = kernel->sampler_;
    EPCTX_ASSIGN_OR_RETURN(int64_t align, node.attrs->GetInt("align_corners", 0));
    s.align_corners = align != 0;
    EPCTX_ASSIGN_OR_RETURN(std::string mode, node.attrs->GetString("mode", "bilinear"));
    if (mode == "bilinear" || mode == "linear") {
      s.mode = SampleMode::kBilinear;
    } else if (mode == "nearest") {
      s.mode = SampleMode::kNearest;
    } else if (mode == "bicubic" || mode == "cubic") {
      s.mode = SampleMode::kBicubic;
    } else {
      return EPCTX_ERROR(kUnsupported, "mode '{}' is not supported", mode);
    }
    EPCTX_ASSIGN_OR_RETURN(std::string padding, node.attrs->GetString("padding_mode", "zeros"));
    if (padding == "zeros") {
      s.padding = PaddingMode::kZeros;
    } else if (padding == "border") {
      s.padding = PaddingMode::kBorder;
    } else if (padding == "reflection") {
      s.padding = PaddingMode::kReflection;
    } else {
      return EPCTX_ERROR(kUnsupported, "padding_mode '{}' is not supported", padding);
    }
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kFloat32, "grid"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* grid, RequiredInput(ctx, 1, "grid"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*grid, DataType::kFloat32, "grid"));
    if (x->shape().size() != 4) {
      return EPCTX_ERROR(kUnsupported, "input X has rank {}, only 4-D GridSample is supported",
                         x->shape().size());
    }
    const std::vector<int64_t>& xs = x->shape();
    const std::vector<int64_t>& gs = grid->shape();
    if (gs.size() != 4 || gs[0] != xs[0] || gs[3] != 2) {
      return EPCTX_ERROR(kInvalidArgument, "input grid has shape {}, expected [{}, H, W, 2]",
                         ShapeToString(gs), xs[0]);
    }
    const int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], oh = gs[1], ow = gs[2];
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, {n, c, oh, ow}));
    const float* xp = x->data_as<float>();
    const float* gp = grid->data_as<float>();
    float* yp = y->mutable_data_as<float>();
    const int64_t positions = oh * ow;
    const int nt = ThreadsFor(ctx.num_threads(), y->element_count() * 8);
    ParallelForRanges(nt, n * c, 1, [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const float* in = xp + plane * h * w;
        const float* g = gp + (plane / c) * positions * 2;
        float* out = yp + plane * positions;
        for (int64_t p = 0; p < positions; ++p) {
          out[p] = sampler_.Sample(in, h, w, g[2 * p], g[2 * p + 1]);
        }
      }
    });
    return Status::Ok();
  }

 private:
  GridSampleKernel() = default;
  Sampler sampler_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateGridSample(const NodeInfo& node) {
  return GridSampleKernel::Create(node);
}

}  // namespace epctx::exec::kernels
