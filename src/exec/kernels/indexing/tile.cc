// Tile: output dim d holds repeats[d] copies of input dim d. Viewing the output of shape
// [r0*d0, r1*d1, ...] as [r0, d0, r1, d1, ...] makes it a strided copy with stride 0 on the
// repeat dims. Strings too.
#include <cstdint>
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/indexing/index_input.h"
#include "exec/kernels/indexing/strided_copy.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class TileKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    EPCTX_RETURN_IF_ERROR(ExpectStaticMovable(node, 0, "input"));
    return std::unique_ptr<Kernel>(new TileKernel());
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* r, RequiredInput(ctx, 1, "repeats"));
    EPCTX_RETURN_IF_ERROR(ExpectMovable(x->dtype(), "input"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, ReadIndexVector(*r, "repeats"));
    const std::vector<int64_t>& shape = x->shape();
    if (repeats.size() != shape.size()) {
      return EPCTX_ERROR(kInvalidArgument, "repeats has {} elements, expected the input rank {}",
                         repeats.size(), shape.size());
    }
    std::vector<int64_t> out_shape(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) {
      if (repeats[d] < 0) {
        return EPCTX_ERROR(kInvalidArgument, "repeats[{}] is {}, expected >= 0", d, repeats[d]);
      }
      if (__builtin_mul_overflow(shape[d], repeats[d], &out_shape[d])) {
        return EPCTX_ERROR(kInvalidArgument, "tiled dim {} overflows", d);
      }
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), out_shape));
    if (y->element_count() == 0) return Status::Ok();
    EPCTX_ASSIGN_OR_RETURN(const std::vector<int64_t> in_strides, ContiguousStrides(shape));
    std::vector<int64_t> dims, src_strides;
    for (size_t d = 0; d < shape.size(); ++d) {
      dims.push_back(repeats[d]);
      src_strides.push_back(0);
      dims.push_back(shape[d]);
      src_strides.push_back(in_strides[d]);
    }
    EPCTX_ASSIGN_OR_RETURN(const std::vector<int64_t> out_strides, ContiguousStrides(dims));
    CopyStridedTensor(dims, *x, 0, src_strides, *y, out_strides, ctx.num_threads());
    return Status::Ok();
  }

 private:
  TileKernel() = default;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateTile(const NodeInfo& node) {
  return TileKernel::Create(node);
}

}  // namespace epctx::exec::kernels
