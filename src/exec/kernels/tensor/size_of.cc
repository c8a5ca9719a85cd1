// Size: the input's element count as an int64 scalar. The compiler folds it when the input's
// shape is static; this kernel serves inputs whose shape is known only at run time.
#include <memory>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class SizeKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo&) {
    return std::unique_ptr<Kernel>(new SizeKernel());
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "data"));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kInt64, {}));
    *y->mutable_data_as<int64_t>() = x->element_count();
    return Status::Ok();
  }

 private:
  SizeKernel() = default;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateSize(const NodeInfo& node) {
  // Later opsets only add element types.
  return SizeKernel::Create(node);
}

}  // namespace epctx::exec::kernels
