// GatherND with batch_dims: the last dim of `indices` holds coordinates into the data dims that
// follow the batch dims; each coordinate tuple selects the slab of the remaining dims.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/indexing/index_input.h"
#include "exec/kernels/indexing/strided_copy.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class GatherNDKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<GatherNDKernel>(new GatherNDKernel());
    EPCTX_RETURN_IF_ERROR(ExpectStaticCopyable(node, 0, "data"));
    EPCTX_ASSIGN_OR_RETURN(kernel->batch_dims_, node.attrs->GetInt("batch_dims", 0));
    if (kernel->batch_dims_ < 0) {
      return EPCTX_ERROR(kInvalidArgument, "batch_dims {} is negative", kernel->batch_dims_);
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "data"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 1, "indices"));
    EPCTX_ASSIGN_OR_RETURN(size_t element, CopyableElementSize(data->dtype(), "data"));
    const std::vector<int64_t>& ds = data->shape();
    const std::vector<int64_t>& is = indices->shape();
    const size_t b = static_cast<size_t>(batch_dims_);
    if (is.empty() || b >= is.size() || b >= ds.size()) {
      return EPCTX_ERROR(kInvalidArgument,
                         "batch_dims {} needs data and indices of higher rank, got {} and {}", b,
                         ds.size(), is.size());
    }
    const int64_t m = is.back();
    if (m < 1 || static_cast<size_t>(m) > ds.size() - b) {
      return EPCTX_ERROR(kInvalidArgument,
                         "indices' last dim {} must be in [1, {}] for data of rank {}", m,
                         ds.size() - b, ds.size());
    }
    for (size_t d = 0; d < b; ++d) {
      if (is[d] != ds[d]) {
        return EPCTX_ERROR(kInvalidArgument, "batch dim {} differs between indices {} and data {}",
                           d, ShapeToString(is), ShapeToString(ds));
      }
    }
    const size_t lead = b + static_cast<size_t>(m);
    std::vector<int64_t> out_shape(is.begin(), is.end() - 1);
    out_shape.insert(out_shape.end(), ds.begin() + static_cast<int64_t>(lead), ds.end());
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> index, ReadIndexTensor(*indices, "indices"));

    EPCTX_ASSIGN_OR_RETURN(const std::vector<int64_t> strides, ContiguousStrides(ds));
    const int64_t tuples = static_cast<int64_t>(index.size()) / m;
    EPCTX_ASSIGN_OR_RETURN(const int64_t batches, CheckedDimProduct(ds, 0, b));
    const int64_t per_batch = batches == 0 ? 0 : tuples / batches;
    EPCTX_ASSIGN_OR_RETURN(const int64_t batch_stride, CheckedDimProduct(ds, b, ds.size()));
    std::vector<int64_t> offsets(static_cast<size_t>(tuples));
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t offset = (t / per_batch) * batch_stride;
      for (int64_t k = 0; k < m; ++k) {
        int64_t i = index[static_cast<size_t>(t * m + k)];
        const size_t d = b + static_cast<size_t>(k);
        EPCTX_RETURN_IF_ERROR(NormalizeIndex(i, ds[d], "indices"));
        offset += i * strides[d];
      }
      offsets[static_cast<size_t>(t)] = offset;
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, data->dtype(), out_shape));
    EPCTX_ASSIGN_OR_RETURN(const int64_t slab_count, CheckedDimProduct(ds, lead, ds.size()));
    const size_t slab = static_cast<size_t>(slab_count) * element;
    if (y->element_count() == 0 || slab == 0) return Status::Ok();
    const auto* src = static_cast<const std::byte*>(data->data());
    auto* dst = static_cast<std::byte*>(y->mutable_data());
    for (size_t t = 0; t < offsets.size(); ++t) {
      std::memcpy(dst + t * slab, src + static_cast<size_t>(offsets[t]) * element, slab);
    }
    return Status::Ok();
  }

 private:
  GatherNDKernel() = default;
  int64_t batch_dims_ = 0;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateGatherND(const NodeInfo& node) {
  return GatherNDKernel::Create(node);
}

}  // namespace epctx::exec::kernels
