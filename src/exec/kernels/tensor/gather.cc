// Gather along `axis` with int32 or int64 indices (negative counting from the end), any
// fixed-size data type (moved as bytes) or strings. Indices are all checked before any data moves.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

template <typename I>
Status NormalizeIndices(const I* raw, int64_t count, int64_t extent, std::vector<int64_t>& out) {
  out.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t v = static_cast<int64_t>(raw[i]);
    if (v < -extent || v >= extent) {
      return EPCTX_ERROR(kInvalidArgument, "index {} is out of range for a dim of {}", v, extent);
    }
    out[static_cast<size_t>(i)] = v < 0 ? v + extent : v;
  }
  return Status::Ok();
}

// Blocks of `block` elements: for each of `outer` slabs of `extent` blocks, the indexed ones.
template <typename T>
void GatherBlocks(const T* src, T* out, int64_t outer, int64_t extent, size_t block,
                  const std::vector<int64_t>& index) {
  for (int64_t o = 0; o < outer; ++o) {
    const T* slab = src + static_cast<size_t>(o * extent) * block;
    for (int64_t i : index) {
      std::copy_n(slab + static_cast<size_t>(i) * block, block, out);
      out += block;
    }
  }
}

class GatherKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<GatherKernel>(new GatherKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->axis_, node.attrs->GetInt("axis", 0));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "data"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 1, "indices"));
    const bool strings = data->dtype() == DataType::kString;
    size_t element = 1;  // strings: counted in elements, not bytes
    if (!strings) {
      EPCTX_ASSIGN_OR_RETURN(element, CopyableElementSize(data->dtype(), "data"));
    }
    const std::vector<int64_t>& ds = data->shape();
    EPCTX_ASSIGN_OR_RETURN(int64_t axis64,
                           NormalizeAxis(axis_, static_cast<int64_t>(ds.size()), "axis"));
    const size_t axis = static_cast<size_t>(axis64);
    const int64_t extent = ds[axis];
    std::vector<int64_t> index;
    if (indices->dtype() == DataType::kInt64) {
      EPCTX_RETURN_IF_ERROR(
          NormalizeIndices(indices->data_as<int64_t>(), indices->element_count(), extent, index));
    } else if (indices->dtype() == DataType::kInt32) {
      EPCTX_RETURN_IF_ERROR(
          NormalizeIndices(indices->data_as<int32_t>(), indices->element_count(), extent, index));
    } else {
      return EPCTX_ERROR(kUnsupported, "input indices has type {}, expected int32 or int64",
                         DataTypeName(indices->dtype()));
    }
    std::vector<int64_t> shape(ds.begin(), ds.begin() + axis64);
    shape.insert(shape.end(), indices->shape().begin(), indices->shape().end());
    shape.insert(shape.end(), ds.begin() + axis64 + 1, ds.end());
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, data->dtype(), std::move(shape)));
    if (y->element_count() == 0) return Status::Ok();
    EPCTX_ASSIGN_OR_RETURN(const int64_t outer, CheckedDimProduct(ds, 0, axis));
    EPCTX_ASSIGN_OR_RETURN(const int64_t block_count, CheckedDimProduct(ds, axis + 1, ds.size()));
    const size_t block = static_cast<size_t>(block_count) * element;
    if (strings) {
      GatherBlocks(data->data_as<std::string>(), y->mutable_data_as<std::string>(), outer, extent,
                   block, index);
    } else {
      GatherBlocks(static_cast<const std::byte*>(data->data()),
                   static_cast<std::byte*>(y->mutable_data()), outer, extent, block, index);
    }
    return Status::Ok();
  }

 private:
  GatherKernel() = default;
  int64_t axis_ = 0;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateGather(const NodeInfo& node) {
  return GatherKernel::Create(node);
}

}  // namespace epctx::exec::kernels
