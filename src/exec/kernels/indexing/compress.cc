// Compress: the slices along an axis (or the flattened input when there is none) whose bool
// condition is true. A condition shorter than the axis leaves the rest out; one longer may only
// be false past the end.
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/indexing/index_input.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class CompressKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<CompressKernel>(new CompressKernel());
    EPCTX_RETURN_IF_ERROR(ExpectStaticCopyable(node, 0, "input"));
    if (node.attrs->Has("axis")) {
      EPCTX_ASSIGN_OR_RETURN(int64_t axis, node.attrs->GetInt("axis", 0));
      kernel->axis_ = axis;
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* cond, RequiredInput(ctx, 1, "condition"));
    EPCTX_ASSIGN_OR_RETURN(size_t element, CopyableElementSize(x->dtype(), "input"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*cond, DataType::kBool, "condition"));
    if (cond->shape().size() != 1) {
      return EPCTX_ERROR(kInvalidArgument, "input condition has rank {}, expected 1",
                         cond->shape().size());
    }
    std::vector<int64_t> shape = x->shape();
    if (!axis_) shape = {x->element_count()};
    size_t axis = 0;
    if (axis_) {
      EPCTX_ASSIGN_OR_RETURN(int64_t a,
                             NormalizeAxis(*axis_, static_cast<int64_t>(shape.size()), "axis"));
      axis = static_cast<size_t>(a);
    }
    const int64_t extent = shape[axis];
    const uint8_t* c = cond->data_as<uint8_t>();
    std::vector<int64_t> kept;
    for (int64_t i = 0; i < cond->element_count(); ++i) {
      if (c[i] == 0) continue;
      if (i >= extent) {
        return EPCTX_ERROR(kInvalidArgument, "condition selects index {} beyond the axis extent {}",
                           i, extent);
      }
      kept.push_back(i);
    }
    std::vector<int64_t> out_shape = shape;
    out_shape[axis] = static_cast<int64_t>(kept.size());
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), out_shape));
    if (y->element_count() == 0) return Status::Ok();
    EPCTX_ASSIGN_OR_RETURN(const int64_t outer, CheckedDimProduct(shape, 0, axis));
    EPCTX_ASSIGN_OR_RETURN(const int64_t block_count,
                           CheckedDimProduct(shape, axis + 1, shape.size()));
    const size_t block = static_cast<size_t>(block_count) * element;
    const auto* src = static_cast<const std::byte*>(x->data());
    auto* dst = static_cast<std::byte*>(y->mutable_data());
    for (int64_t o = 0; o < outer; ++o) {
      const std::byte* slab = src + static_cast<size_t>(o * extent) * block;
      for (int64_t i : kept) {
        std::memcpy(dst, slab + static_cast<size_t>(i) * block, block);
        dst += block;
      }
    }
    return Status::Ok();
  }

 private:
  CompressKernel() = default;
  std::optional<int64_t> axis_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateCompress(const NodeInfo& node) {
  return CompressKernel::Create(node);
}

}  // namespace epctx::exec::kernels
