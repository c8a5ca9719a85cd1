// CenterCropPad (opset 18): each axis named by `axes` (all axes without it) takes the length the
// `shape` input gives it, keeping its center: a longer axis loses floor(d / 2) elements at its
// start and the rest at its end, a shorter one gains floor(d / 2) zeros at its start and the
// rest at its end (d: the difference in length), as ONNX's function body of the op computes
// them. Every fixed-size element type.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/indexing/index_input.h"
#include "exec/kernels/indexing/strided_copy.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class CenterCropPadKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    EPCTX_RETURN_IF_ERROR(ExpectStaticCopyable(node, 0, "input_data"));
    auto kernel = std::unique_ptr<CenterCropPadKernel>(new CenterCropPadKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->axes_, node.attrs->GetInts("axes", {}));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input_data"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* s, RequiredInput(ctx, 1, "shape"));
    EPCTX_ASSIGN_OR_RETURN(const size_t element, CopyableElementSize(x->dtype(), "input_data"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> lengths, ReadIndexVector(*s, "shape"));
    const std::vector<int64_t>& in_shape = x->shape();
    const int64_t rank = static_cast<int64_t>(in_shape.size());
    std::vector<int64_t> axes = axes_;
    if (axes.empty()) {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    if (lengths.size() != axes.size()) {
      return EPCTX_ERROR(kInvalidArgument, "shape has {} elements for {} axes", lengths.size(),
                         axes.size());
    }
    std::vector<int64_t> out_shape = in_shape;
    std::vector<bool> seen(in_shape.size(), false);
    for (size_t j = 0; j < axes.size(); ++j) {
      EPCTX_RETURN_IF_ERROR(NormalizeIndex(axes[j], rank, "axes"));
      if (seen[axes[j]]) {
        return EPCTX_ERROR(kInvalidArgument, "axes names axis {} twice", axes[j]);
      }
      seen[axes[j]] = true;
      if (lengths[j] < 0) {
        return EPCTX_ERROR(kInvalidArgument, "shape[{}] is {}, expected >= 0", j, lengths[j]);
      }
      out_shape[axes[j]] = lengths[j];
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), out_shape));
    if (y->element_count() == 0) return Status::Ok();
    // The box both share: per axis min(in, out) elements, from `crop` in x and `pad` in y.
    std::vector<int64_t> box(in_shape.size());
    int64_t src_offset = 0, dst_offset = 0;
    EPCTX_ASSIGN_OR_RETURN(const std::vector<int64_t> in_strides, ContiguousStrides(in_shape));
    EPCTX_ASSIGN_OR_RETURN(const std::vector<int64_t> out_strides, ContiguousStrides(out_shape));
    bool padded = false;
    for (size_t d = 0; d < in_shape.size(); ++d) {
      const int64_t in = in_shape[d], out = out_shape[d];
      box[d] = std::min(in, out);
      if (in > out) src_offset += (in - out) / 2 * in_strides[d];
      if (out > in) {
        dst_offset += (out - in) / 2 * out_strides[d];
        padded = true;
      }
    }
    auto* dst = static_cast<std::byte*>(y->mutable_data());
    if (padded) std::memset(dst, 0, y->byte_size());
    if (x->element_count() == 0) return Status::Ok();
    const auto* src = static_cast<const std::byte*>(x->data());
    CopyStrided(box, src + src_offset * element, in_strides, dst + dst_offset * element,
                out_strides, element, ctx.num_threads());
    return Status::Ok();
  }

 private:
  CenterCropPadKernel() = default;
  std::vector<int64_t> axes_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateCenterCropPad(const NodeInfo& node) {
  return CenterCropPadKernel::Create(node);
}

}  // namespace epctx::exec::kernels
