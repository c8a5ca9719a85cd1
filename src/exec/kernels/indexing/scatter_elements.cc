// ScatterElements (and the deprecated Scatter, opset 9-10): a copy of data where each update
// lands at its own position with the axis coordinate taken from indices. Updates apply in
// order, so with reduction "none" the last duplicate wins.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/indexing/index_input.h"
#include "exec/kernels/indexing/scatter_apply.h"
#include "exec/kernels/indexing/strided_copy.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class ScatterElementsKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<ScatterElementsKernel>(new ScatterElementsKernel());
    EPCTX_RETURN_IF_ERROR(ExpectStaticCopyable(node, 0, "data"));
    EPCTX_ASSIGN_OR_RETURN(kernel->axis_, node.attrs->GetInt("axis", 0));
    EPCTX_ASSIGN_OR_RETURN(std::string reduction, node.attrs->GetString("reduction", "none"));
    EPCTX_ASSIGN_OR_RETURN(kernel->reduction_, ParseScatterReduction(reduction));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "data"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 1, "indices"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* updates, RequiredInput(ctx, 2, "updates"));
    EPCTX_RETURN_IF_ERROR(CopyableElementSize(data->dtype(), "data").status());
    const std::vector<int64_t>& ds = data->shape();
    const std::vector<int64_t>& is = indices->shape();
    EPCTX_ASSIGN_OR_RETURN(int64_t axis64,
                           NormalizeAxis(axis_, static_cast<int64_t>(ds.size()), "axis"));
    const size_t axis = static_cast<size_t>(axis64);
    if (updates->dtype() != data->dtype() || updates->shape() != is) {
      return EPCTX_ERROR(kInvalidArgument,
                         "updates has type {} and shape {}, expected {} of the indices' shape {}",
                         DataTypeName(updates->dtype()), ShapeToString(updates->shape()),
                         DataTypeName(data->dtype()), ShapeToString(is));
    }
    EPCTX_RETURN_IF_ERROR(ExpectFitsExcept(is, "indices", ds, "data", axis));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> index, ReadIndexTensor(*indices, "indices"));
    for (int64_t& i : index) EPCTX_RETURN_IF_ERROR(NormalizeIndex(i, ds[axis], "indices"));

    // Element offset of every update in the output.
    EPCTX_ASSIGN_OR_RETURN(const std::vector<int64_t> strides, ContiguousStrides(ds));
    std::vector<int64_t> offsets(index.size());
    std::vector<int64_t> pos(is.size(), 0);
    int64_t base = 0;
    for (size_t i = 0; i < index.size(); ++i) {
      offsets[i] = base + index[i] * strides[axis];
      for (size_t d = is.size(); d-- > 0;) {
        if (d != axis) base += strides[d];
        if (++pos[d] < is[d]) break;
        if (d != axis) base -= strides[d] * is[d];
        pos[d] = 0;
      }
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, AllocateCopyOf(ctx, 0, *data));
    return ScatterSlabs(reduction_, data->dtype(), static_cast<std::byte*>(y->mutable_data()),
                        offsets, static_cast<const std::byte*>(updates->data()), 1);
  }

 private:
  ScatterElementsKernel() = default;
  int64_t axis_ = 0;
  ScatterReduction reduction_ = ScatterReduction::kNone;
};

}  // namespace

// Scatter (opsets 9 to 10) is ScatterElements under its old name.
Result<std::unique_ptr<Kernel>> CreateScatterElements(const NodeInfo& node) {
  return ScatterElementsKernel::Create(node);
}

}  // namespace epctx::exec::kernels
