// Col2Im (opset 18): the inverse layout of im2col. Input [N, C * K, L] holds, for every channel
// c, tap k of the block (K = product of block_shape, row-major) and window position l of the L
// positions a sliding block takes over the padded image, one value; the output [N, C, image...]
// sums into each image element the values of every (k, l) that lands on it. Padding positions
// are dropped. float32, 1 to 3 spatial dims.
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/nn/window.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class Col2ImKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<Col2ImKernel>(new Col2ImKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->attrs_, ParseWindowAttrs(*node.attrs));
    // Bounded so that the window arithmetic (padded extent, dilated span) cannot overflow.
    for (const auto& [values, name] :
         {std::pair{&kernel->attrs_.pads, "pads"}, std::pair{&kernel->attrs_.strides, "strides"},
          std::pair{&kernel->attrs_.dilations, "dilations"}}) {
      for (int64_t v : *values) {
        if (v > INT32_MAX) {
          return EPCTX_ERROR(kInvalidArgument, "{} holds {}, above 2^31 - 1", name, v);
        }
      }
    }
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "input"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* image_t, RequiredInput(ctx, 1, "image_shape"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* block_t, RequiredInput(ctx, 2, "block_shape"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kFloat32, "input"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> image, ReadIndexVector(*image_t, "image_shape"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> block, ReadIndexVector(*block_t, "block_shape"));
    if (image.empty() || image.size() > 3 || block.size() != image.size()) {
      return EPCTX_ERROR(kInvalidArgument,
                         "image_shape has {} dims and block_shape {}: expected the same count, "
                         "1 to 3",
                         image.size(), block.size());
    }
    for (size_t d = 0; d < image.size(); ++d) {
      if (image[d] < 1 || block[d] < 1 || image[d] > INT32_MAX || block[d] > INT32_MAX) {
        return EPCTX_ERROR(kInvalidArgument,
                           "image_shape[{}] = {} and block_shape[{}] = {}: expected dims from 1 "
                           "to 2^31 - 1",
                           d, image[d], d, block[d]);
      }
    }
    // Every product below fits in int64 once these do (pads may be large).
    EPCTX_RETURN_IF_ERROR(CheckedDimProduct(image, 0, image.size()).status());
    EPCTX_RETURN_IF_ERROR(CheckedDimProduct(block, 0, block.size()).status());
    EPCTX_RETURN_IF_ERROR(ValidateWindowAttrs(attrs_, image.size()));
    EPCTX_ASSIGN_OR_RETURN(const Window3d w, ResolveWindow(attrs_, image, block));
    EPCTX_RETURN_IF_ERROR(CheckedDimProduct(w.out_spatial, 0, w.out_spatial.size()).status());
    const std::vector<int64_t>& xs = x->shape();
    const int64_t taps = w.kernel_size();
    if (xs.size() != 3 || xs[1] % taps != 0 || xs[2] != w.out_size()) {
      return EPCTX_ERROR(kInvalidArgument,
                         "input has shape {}, expected [N, C * {}, {}] (the block's {} taps, and "
                         "the {} positions the block takes over the padded image)",
                         ShapeToString(xs), taps, w.out_size(), taps, w.out_size());
    }
    const int64_t channels = xs[1] / taps;
    std::vector<int64_t> out_shape = {xs[0], channels};
    out_shape.insert(out_shape.end(), image.begin(), image.end());
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, out_shape));
    if (y->element_count() == 0) return Status::Ok();
    float* yp = y->mutable_data_as<float>();
    std::memset(yp, 0, y->byte_size());
    const float* xp = x->data_as<float>();
    const int64_t planes = xs[0] * channels;
    const int64_t positions = w.out_size();
    const int nt = ThreadsFor(ctx.num_threads(), x->element_count());
    // One (sample, channel) image per task: no two tasks write the same element.
    ParallelForRanges(nt, planes, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        float* img = yp + p * w.in_size();
        const float* cols = xp + p * taps * positions;
        for (int64_t k = 0; k < taps; ++k) {
          const int64_t kd = k / (w.kernel[1] * w.kernel[2]);
          const int64_t kh = k / w.kernel[2] % w.kernel[1];
          const int64_t kw = k % w.kernel[2];
          const float* col = cols + k * positions;
          for (int64_t od = 0; od < w.out[0]; ++od) {
            const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
            if (id < 0 || id >= w.in[0]) continue;
            for (int64_t oh = 0; oh < w.out[1]; ++oh) {
              const int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
              if (ih < 0 || ih >= w.in[1]) continue;
              float* row = img + (id * w.in[1] + ih) * w.in[2];
              const float* src = col + (od * w.out[1] + oh) * w.out[2];
              for (int64_t ow = 0; ow < w.out[2]; ++ow) {
                const int64_t iw = ow * w.stride[2] - w.pad_begin[2] + kw * w.dilation[2];
                if (iw >= 0 && iw < w.in[2]) row[iw] += src[ow];
              }
            }
          }
        }
      }
    });
    return Status::Ok();
  }

 private:
  Col2ImKernel() = default;
  WindowAttrs attrs_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateCol2Im(const NodeInfo& node) {
  return Col2ImKernel::Create(node);
}

}  // namespace epctx::exec::kernels
