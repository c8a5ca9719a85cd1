// Expand: broadcasts the input to a shape, numpy style in both directions (a 1 in the requested
// shape keeps the input's dim), strings included.
#include <cstdint>
#include <memory>
#include <vector>

#include "exec/kernels/common/broadcast.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/indexing/index_input.h"
#include "exec/kernels/indexing/strided_copy.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class ExpandKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    EPCTX_RETURN_IF_ERROR(ExpectStaticMovable(node, 0, "input"));
    return std::unique_ptr<Kernel>(new ExpandKernel());
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* s, RequiredInput(ctx, 1, "shape"));
    EPCTX_RETURN_IF_ERROR(ExpectMovable(x->dtype(), "input"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> requested, ReadIndexVector(*s, "shape"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> out_shape, BroadcastShapes(x->shape(), requested));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), out_shape));
    if (y->element_count() == 0) return Status::Ok();
    const std::vector<int64_t>& in_shape = x->shape();
    EPCTX_ASSIGN_OR_RETURN(const std::vector<int64_t> in_strides, ContiguousStrides(in_shape));
    const size_t lead = out_shape.size() - in_shape.size();
    std::vector<int64_t> src_strides(out_shape.size(), 0);
    for (size_t d = 0; d < in_shape.size(); ++d) {
      src_strides[lead + d] = in_shape[d] == 1 ? 0 : in_strides[d];
    }
    EPCTX_ASSIGN_OR_RETURN(const std::vector<int64_t> out_strides, ContiguousStrides(out_shape));
    CopyStridedTensor(out_shape, *x, 0, src_strides, *y, out_strides, ctx.num_threads());
    return Status::Ok();
  }

 private:
  ExpandKernel() = default;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateExpand(const NodeInfo& node) {
  return ExpandKernel::Create(node);
}

}  // namespace epctx::exec::kernels
