// The optional ops: Optional (wraps its input, or makes an empty optional), OptionalHasElement
// and OptionalGetElement. An optional holding a value is that value itself; an empty one is a
// Tensor of ValueKind::kNone.
#include <memory>

#include "exec/kernels/common/copy.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class OptionalKernel final : public Kernel {
 public:
  OptionalKernel(DataType type, ValueKind of) : type_(type), of_(of) {}
  Status Run(KernelContext& ctx) override {
    const Tensor* in = ctx.input_count() > 0 ? ctx.input(0) : nullptr;
    if (in == nullptr) return ctx.SetOutput(0, Tensor::None(type_, of_));
    return CopyToOutput(ctx, 0, *in, in->shape());
  }

 private:
  DataType type_;
  ValueKind of_;
};

class OptionalHasElementKernel final : public Kernel {
 public:
  Status Run(KernelContext& ctx) override {
    const Tensor* in = ctx.input_count() > 0 ? ctx.input(0) : nullptr;
    EPCTX_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DataType::kBool, {}));
    *out->mutable_data_as<bool>() = in != nullptr && in->kind() != ValueKind::kNone;
    return Status::Ok();
  }
};

class OptionalGetElementKernel final : public Kernel {
 public:
  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0, "input"));
    if (in->kind() == ValueKind::kNone) {
      return EPCTX_ERROR(kInvalidArgument, "the optional input holds no value");
    }
    return CopyToOutput(ctx, 0, *in, in->shape());
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateOptional(const NodeInfo& node) {
  if (node.outputs.empty() || !node.outputs[0].optional) {
    return EPCTX_ERROR(kInvalidArgument, "the output's type is not known to be an optional");
  }
  return std::unique_ptr<Kernel>(new OptionalKernel(node.outputs[0].dtype, node.outputs[0].kind));
}
Result<std::unique_ptr<Kernel>> CreateOptionalHasElement(const NodeInfo&) {
  return std::unique_ptr<Kernel>(new OptionalHasElementKernel());
}
Result<std::unique_ptr<Kernel>> CreateOptionalGetElement(const NodeInfo&) {
  return std::unique_ptr<Kernel>(new OptionalGetElementKernel());
}

}  // namespace epctx::exec::kernels
