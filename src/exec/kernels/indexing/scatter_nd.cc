// ScatterND: a copy of data where each coordinate tuple in the last dim of indices receives a
// slab of updates (the data dims after the tuple), replaced or combined per `reduction`.
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

class ScatterNDKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<ScatterNDKernel>(new ScatterNDKernel());
    EPCTX_RETURN_IF_ERROR(ExpectStaticCopyable(node, 0, "data"));
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
    if (is.empty()) return EPCTX_ERROR(kInvalidArgument, "indices must have rank >= 1");
    const int64_t k = is.back();
    if (k < 1 || static_cast<size_t>(k) > ds.size()) {
      return EPCTX_ERROR(kInvalidArgument,
                         "indices' last dim {} must be in [1, {}] for data of rank {}", k,
                         ds.size(), ds.size());
    }
    std::vector<int64_t> expected(is.begin(), is.end() - 1);
    expected.insert(expected.end(), ds.begin() + k, ds.end());
    if (updates->dtype() != data->dtype() || updates->shape() != expected) {
      return EPCTX_ERROR(kInvalidArgument, "updates has type {} and shape {}, expected {} {}",
                         DataTypeName(updates->dtype()), ShapeToString(updates->shape()),
                         DataTypeName(data->dtype()), ShapeToString(expected));
    }
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> index, ReadIndexTensor(*indices, "indices"));
    EPCTX_ASSIGN_OR_RETURN(const std::vector<int64_t> strides, ContiguousStrides(ds));
    const size_t tuples = index.size() / static_cast<size_t>(k);
    std::vector<int64_t> offsets(tuples);
    for (size_t t = 0; t < tuples; ++t) {
      int64_t offset = 0;
      for (size_t j = 0; j < static_cast<size_t>(k); ++j) {
        int64_t i = index[t * static_cast<size_t>(k) + j];
        EPCTX_RETURN_IF_ERROR(NormalizeIndex(i, ds[j], "indices"));
        offset += i * strides[j];
      }
      offsets[t] = offset;
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, AllocateCopyOf(ctx, 0, *data));
    EPCTX_ASSIGN_OR_RETURN(const int64_t slab,
                           CheckedDimProduct(ds, static_cast<size_t>(k), ds.size()));
    if (slab == 0) return Status::Ok();
    return ScatterSlabs(reduction_, data->dtype(), static_cast<std::byte*>(y->mutable_data()),
                        offsets, static_cast<const std::byte*>(updates->data()), slab);
  }

 private:
  ScatterNDKernel() = default;
  ScatterReduction reduction_ = ScatterReduction::kNone;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateScatterND(const NodeInfo& node) {
  return ScatterNDKernel::Create(node);
}

}  // namespace epctx::exec::kernels
