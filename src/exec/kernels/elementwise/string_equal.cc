#include "exec/kernels/elementwise/string_equal.h"

#include <string>
#include <utility>
#include <vector>

#include "exec/kernels/common/broadcast.h"
#include "exec/kernels/common/shape.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::elementwise {
namespace {

class StringEqualKernel final : public Kernel {
 public:
  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, "A"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1, "B"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*a, DataType::kString, "A"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*b, DataType::kString, "B"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastShapes(a->shape(), b->shape()));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kBool, shape));
    const BroadcastPlan plan = PlanBroadcast(a->shape(), b->shape(), shape);
    const std::string* ap = a->data_as<std::string>();
    const std::string* bp = b->data_as<std::string>();
    bool* yp = y->mutable_data_as<bool>();
    ForEachBroadcastRun(
        plan, ctx.num_threads(),
        [&](int64_t y_off, int64_t a_off, int64_t b_off, int64_t n, int64_t as, int64_t bs) {
          for (int64_t i = 0; i < n; ++i) {
            yp[y_off + i] = ap[a_off + i * as] == bp[b_off + i * bs];
          }
        });
    return Status::Ok();
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateStringEqual(const NodeInfo& node) {
  if (node.inputs.size() != 2) {
    return EPCTX_ERROR(kInvalidArgument, "expected 2 inputs, got {}", node.inputs.size());
  }
  EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kString, "A"));
  EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kString, "B"));
  return std::unique_ptr<Kernel>(new StringEqualKernel());
}

}  // namespace epctx::exec::kernels::elementwise
