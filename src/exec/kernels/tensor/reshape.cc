// Reshape (shape as input 1, opset 5 on): 0 copies the input dim at that index unless
// allowzero=1 (opset 14), one -1 is inferred from the element count.
#include <memory>
#include <vector>

#include "exec/kernels/common/copy.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

Result<std::vector<int64_t>> ResolveShape(const std::vector<int64_t>& in,
                                          std::vector<int64_t> shape, bool allow_zero) {
  int64_t infer = -1;
  bool has_zero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t& d = shape[i];
    if (d == -1) {
      if (infer >= 0) {
        return EPCTX_ERROR(kInvalidArgument, "shape {} has more than one -1", ShapeToString(shape));
      }
      infer = static_cast<int64_t>(i);
      continue;
    }
    if (d < -1) {
      return EPCTX_ERROR(kInvalidArgument, "shape holds {}, expected -1 or more", d);
    }
    if (d == 0 && !allow_zero) {
      if (i >= in.size()) {
        return EPCTX_ERROR(kInvalidArgument, "shape has 0 at index {}, beyond the input's rank {}",
                           i, in.size());
      }
      d = in[i];
    }
    has_zero = has_zero || d == 0;
  }
  // Exact, whatever the order of the dims: [2^32, 2^32, 0] holds 0 elements.
  std::vector<int64_t> given;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (static_cast<int64_t>(i) != infer) given.push_back(shape[i]);
  }
  int64_t known = 0;
  if (!ExactDimProduct(given, &known)) {
    return EPCTX_ERROR(kInvalidArgument, "shape's element count overflows");
  }
  EPCTX_ASSIGN_OR_RETURN(const int64_t count, CheckedDimProduct(in));
  if (infer >= 0) {
    if (has_zero) {
      return EPCTX_ERROR(kInvalidArgument, "shape has both -1 and a 0 dim, so -1 is ambiguous");
    }
    if (count % known != 0) {
      return EPCTX_ERROR(kInvalidArgument, "cannot reshape {} to {}: {} elements",
                         ShapeToString(in), ShapeToString(shape), count);
    }
    shape[static_cast<size_t>(infer)] = count / known;
  } else if (known != count) {
    return EPCTX_ERROR(kInvalidArgument, "cannot reshape {} ({} elements) to {} ({} elements)",
                       ShapeToString(in), count, ShapeToString(shape), known);
  }
  return shape;
}

class ReshapeKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<ReshapeKernel>(new ReshapeKernel());
    EPCTX_ASSIGN_OR_RETURN(int64_t allow_zero, node.attrs->GetInt("allowzero", 0));
    kernel->allow_zero_ = allow_zero != 0;
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "data"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* s, RequiredInput(ctx, 1, "shape"));
    if (s->dtype() != DataType::kInt64) {
      return EPCTX_ERROR(kInvalidArgument, "input shape has type {}, expected int64",
                         DataTypeName(s->dtype()));
    }
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> requested, ReadIndexVector(*s, "shape"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                           ResolveShape(x->shape(), std::move(requested), allow_zero_));
    return ViewOrCopy(ctx, 0, 0, *x, std::move(shape));
  }

 private:
  ReshapeKernel() = default;
  bool allow_zero_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateReshape(const NodeInfo& node) {
  return ReshapeKernel::Create(node);
}

}  // namespace epctx::exec::kernels
