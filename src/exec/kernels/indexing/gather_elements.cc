// GatherElements: output[i...] = data[i... with the axis coordinate replaced by indices[i...]].
// The output has the indices' shape; any fixed-size data type.
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

// Element offsets into data for every position of an index tensor of shape `shape`, whose
// values `index` (already normalized) replace the coordinate along `axis`.
std::vector<int64_t> ElementOffsets(const std::vector<int64_t>& shape,
                                    const std::vector<int64_t>& data_strides, size_t axis,
                                    const std::vector<int64_t>& index) {
  std::vector<int64_t> offsets(index.size());
  const size_t rank = shape.size();
  std::vector<int64_t> pos(rank, 0);
  int64_t base = 0;
  for (size_t i = 0; i < index.size(); ++i) {
    offsets[i] = base + index[i] * data_strides[axis];
    for (size_t d = rank; d-- > 0;) {
      if (d != axis) base += data_strides[d];
      if (++pos[d] < shape[d]) break;
      if (d != axis) base -= data_strides[d] * shape[d];
      pos[d] = 0;
    }
  }
  return offsets;
}

template <typename E>
void GatherByOffsets(const void* data, const std::vector<int64_t>& offsets, void* out) {
  const E* src = static_cast<const E*>(data);
  E* dst = static_cast<E*>(out);
  for (size_t i = 0; i < offsets.size(); ++i) dst[i] = src[offsets[i]];
}

class GatherElementsKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<GatherElementsKernel>(new GatherElementsKernel());
    EPCTX_RETURN_IF_ERROR(ExpectStaticCopyable(node, 0, "data"));
    EPCTX_ASSIGN_OR_RETURN(kernel->axis_, node.attrs->GetInt("axis", 0));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "data"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 1, "indices"));
    EPCTX_ASSIGN_OR_RETURN(size_t element, CopyableElementSize(data->dtype(), "data"));
    const std::vector<int64_t>& ds = data->shape();
    EPCTX_ASSIGN_OR_RETURN(int64_t axis64,
                           NormalizeAxis(axis_, static_cast<int64_t>(ds.size()), "axis"));
    const size_t axis = static_cast<size_t>(axis64);
    EPCTX_RETURN_IF_ERROR(ExpectFitsExcept(indices->shape(), "indices", ds, "data", axis));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> index, ReadIndexTensor(*indices, "indices"));
    for (int64_t& i : index) EPCTX_RETURN_IF_ERROR(NormalizeIndex(i, ds[axis], "indices"));
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, data->dtype(), indices->shape()));
    if (index.empty()) return Status::Ok();
    EPCTX_ASSIGN_OR_RETURN(const std::vector<int64_t> strides, ContiguousStrides(ds));
    const std::vector<int64_t> offsets = ElementOffsets(indices->shape(), strides, axis, index);
    switch (element) {
      case 1:
        GatherByOffsets<uint8_t>(data->data(), offsets, y->mutable_data());
        break;
      case 2:
        GatherByOffsets<uint16_t>(data->data(), offsets, y->mutable_data());
        break;
      case 4:
        GatherByOffsets<uint32_t>(data->data(), offsets, y->mutable_data());
        break;
      case 8:
        GatherByOffsets<uint64_t>(data->data(), offsets, y->mutable_data());
        break;
      default:
        return EPCTX_ERROR(kUnsupported, "GatherElements does not support type {}",
                           DataTypeName(data->dtype()));
    }
    return Status::Ok();
  }

 private:
  GatherElementsKernel() = default;
  int64_t axis_ = 0;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateGatherElements(const NodeInfo& node) {
  return GatherElementsKernel::Create(node);
}

}  // namespace epctx::exec::kernels
