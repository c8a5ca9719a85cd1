// Shape: the input's dims as int64, sliced by start/end from opset 15 on (clamped, negative
// counting from the end).
#include <algorithm>
#include <memory>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class ShapeKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<ShapeKernel>(new ShapeKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->start_, node.attrs->GetInt("start", 0));
    if (const AttributeValue* end = node.attrs->Find("end")) {
      EPCTX_ASSIGN_OR_RETURN(kernel->end_, node.attrs->GetInt("end", 0));
      kernel->has_end_ = end != nullptr;
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "data"));
    const int64_t rank = static_cast<int64_t>(x->shape().size());
    auto clamp = [rank](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
    const int64_t begin = clamp(start_);
    const int64_t end = std::max(begin, has_end_ ? clamp(end_) : rank);
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kInt64, {end - begin}));
    std::copy(x->shape().begin() + begin, x->shape().begin() + end, y->mutable_data_as<int64_t>());
    return Status::Ok();
  }

 private:
  ShapeKernel() = default;
  int64_t start_ = 0;
  int64_t end_ = 0;
  bool has_end_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateShape(const NodeInfo& node) {
  // Opset 1 has no start/end attributes; reading them as absent gives its behavior.
  return ShapeKernel::Create(node);
}

}  // namespace epctx::exec::kernels
